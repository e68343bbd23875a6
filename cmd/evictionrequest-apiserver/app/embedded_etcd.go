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

package app

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/evictionrequest/apiserver/pkg/embeddedetcd"
	"github.com/evictionrequest/apiserver/pkg/util/loopback"
)

// EmbeddedEtcdOptions configure the etcd the server starts in its own process
// when it is given no --etcd-servers: the default for a single machine.
type EmbeddedEtcdOptions struct {
	// DataDir holds the etcd data; the objects survive restarts through it.
	DataDir string
	// ClientPort and PeerPort are the loopback ports of etcd; 0 picks a free one.
	ClientPort int
	PeerPort   int

	// enabled is decided by Complete: no external etcd was configured.
	enabled bool
}

// NewEmbeddedEtcdOptions returns the defaults of the embedded etcd.
func NewEmbeddedEtcdOptions() *EmbeddedEtcdOptions {
	return &EmbeddedEtcdOptions{DataDir: "/var/lib/evictionrequest-apiserver/etcd"}
}

// AddFlags adds the flags of the embedded etcd to fs.
func (o *EmbeddedEtcdOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DataDir, "embedded-etcd-data-dir", o.DataDir,
		"Data directory of the etcd the server embeds when --etcd-servers is not set. Objects survive restarts on the same directory.")
	fs.IntVar(&o.ClientPort, "embedded-etcd-client-port", o.ClientPort,
		"Loopback port on which the embedded etcd serves clients; 0 picks a free port.")
	fs.IntVar(&o.PeerPort, "embedded-etcd-peer-port", o.PeerPort,
		"Loopback port on which the embedded etcd listens for peers; 0 picks a free port.")
}

// Complete enables the embedded etcd when no external etcd is configured, and
// returns the URL the storage layer must use to reach it. The ports it picks
// differ from taken: the ports the server is about to bind itself.
func (o *EmbeddedEtcdOptions) Complete(etcdServers []string, taken ...int) (clientURL string, err error) {
	if len(etcdServers) > 0 {
		return "", nil
	}
	o.enabled = true
	ports, err := loopback.FreePorts(2, append(taken, o.ClientPort, o.PeerPort)...)
	if err != nil {
		return "", fmt.Errorf("choosing ports for the embedded etcd: %w", err)
	}
	if o.ClientPort == 0 {
		o.ClientPort = ports[0]
	}
	if o.PeerPort == 0 {
		o.PeerPort = ports[1]
	}
	return o.config().ClientURL().String(), nil
}

// Validate checks the embedded etcd options.
func (o *EmbeddedEtcdOptions) Validate() []error {
	if !o.enabled {
		return nil
	}
	var errs []error
	if o.DataDir == "" {
		errs = append(errs, fmt.Errorf("--embedded-etcd-data-dir must be set when --etcd-servers is not"))
	}
	if o.ClientPort == o.PeerPort {
		errs = append(errs, fmt.Errorf("--embedded-etcd-client-port and --embedded-etcd-peer-port must differ"))
	}
	return errs
}

func (o *EmbeddedEtcdOptions) config() embeddedetcd.Config {
	return embeddedetcd.Config{DataDir: o.DataDir, ClientPort: o.ClientPort, PeerPort: o.PeerPort}
}

// Start starts the embedded etcd, if enabled, and waits until it serves.
// The returned stop function closes it; it is a no-op when etcd is external.
func (o *EmbeddedEtcdOptions) Start(ctx context.Context) (stop func(), err error) {
	if !o.enabled {
		return func() {}, nil
	}
	return embeddedetcd.Start(ctx, o.config())
}
