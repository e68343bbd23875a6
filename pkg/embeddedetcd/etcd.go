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

// Package embeddedetcd runs the etcd that evictionrequest-apiserver stores
// in when it is given no --etcd-servers: a one-member etcd in the server's
// own process, on loopback, the default for a single machine.
package embeddedetcd

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"k8s.io/klog/v2"
)

// startTimeout bounds how long Start waits for etcd to become ready, which
// includes replaying its write-ahead log.
const startTimeout = 2 * time.Minute

// Config is where the embedded etcd keeps its data and which loopback ports
// it binds.
type Config struct {
	// DataDir holds the data; the objects survive restarts through it.
	DataDir string
	// ClientPort and PeerPort are loopback ports.
	ClientPort, PeerPort int
}

// ClientURL is the URL the storage layer reaches the etcd of c at.
func (c Config) ClientURL() *url.URL {
	return loopbackURL(c.ClientPort)
}

func loopbackURL(port int) *url.URL {
	return &url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
}

// Start starts the etcd of c and waits until it serves. The returned
// function stops it.
func Start(ctx context.Context, c Config) (stop func(), err error) {
	logger := klog.FromContext(ctx)
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the embedded etcd data directory: %w", err)
	}
	cfg := embed.NewConfig()
	cfg.Name = "evictionrequest-apiserver"
	cfg.Dir = c.DataDir
	peerURL, clientURL := *loopbackURL(c.PeerPort), *c.ClientURL()
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peerURL}, []url.URL{peerURL}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{clientURL}, []url.URL{clientURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// etcd logs through zap, at warnings and above so that our klog output
	// stays readable. Closing etcd logs its listeners' "use of closed
	// network connection" as errors, so the level rises before Close.
	logLevel := zap.NewAtomicLevelAt(zap.WarnLevel)
	zapConfig := zap.NewProductionConfig()
	zapConfig.Level = logLevel
	zapLogger, err := zapConfig.Build()
	if err != nil {
		return nil, err
	}
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zapLogger.Named("embedded-etcd"))
	// Keep the history kube-apiserver's own etcd keeps, so watches can resume.
	cfg.AutoCompactionMode = "periodic"
	cfg.AutoCompactionRetention = "5m"

	etcd, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("starting the embedded etcd: %w", err)
	}
	if err := waitReady(ctx, etcd); err != nil {
		etcd.Close()
		return nil, err
	}
	logger.Info("Embedded etcd is serving", "dataDir", c.DataDir, "clientURL", clientURL.String())
	return func() {
		logLevel.SetLevel(zap.FatalLevel)
		etcd.Close()
		logger.Info("Embedded etcd stopped", "dataDir", c.DataDir)
	}, nil
}

// waitReady waits until etcd serves, fails, or startTimeout or ctx ends.
func waitReady(ctx context.Context, etcd *embed.Etcd) error {
	select {
	case <-etcd.Server.ReadyNotify():
		return nil
	case err := <-etcd.Err():
		return fmt.Errorf("embedded etcd failed: %w", err)
	case <-time.After(startTimeout):
		return fmt.Errorf("embedded etcd not ready after %s", startTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}
