/*
Copyright The EvictionRequest API Server Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package localcluster

import (
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes <dir>/<name>.kubeconfig: the cluster at server,
// trusted through the cluster CA, and the client certificate pair, all
// embedded so that the file stands on its own.
func (c *Cluster) writeKubeconfig(name, server string, pair *keyPair) (string, error) {
	path := c.path(name + ".kubeconfig")
	if name == "admin" {
		path = c.path("kubeconfig")
	}
	config := clientcmdapi.NewConfig()
	config.Clusters["local"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: c.pki.clusterCA.certPEM()}
	config.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: pair.CertPEM, ClientKeyData: pair.KeyPEM}
	config.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: name}
	config.CurrentContext = "local"
	return path, clientcmd.WriteToFile(*config, path)
}

func loadKubeconfig(path string) (*rest.Config, error) {
	config, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, err
	}
	// The e2e suite creates objects in bursts; the client-side default of 5
	// QPS would only slow it down against a local apiserver.
	config.QPS, config.Burst = 100, 200
	return config, nil
}
