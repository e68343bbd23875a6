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

package benchutil

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/evictionrequest/apiserver/internal/promtext"
)

// PprofSource is a process of the cluster and how to read its
// /debug/pprof.
type PprofSource struct {
	Name string
	// Get GETs /debug/pprof/<kind> with params.
	Get func(ctx context.Context, kind string, params map[string]string) ([]byte, error)
}

// APIServerPprof reads the /debug/pprof of the API server config reaches
// (kube-apiserver, or our server reached directly), as its client.
func APIServerPprof(name string, config *rest.Config) PprofSource {
	return PprofSource{Name: name, Get: func(ctx context.Context, kind string, params map[string]string) ([]byte, error) {
		return apiServerGet(ctx, config, "/debug/pprof/"+kind, params)
	}}
}

// APIServerMetrics reads the /metrics of the API server config reaches,
// within callTimeout.
func APIServerMetrics(ctx context.Context, config *rest.Config) (promtext.Samples, error) {
	callCtx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	body, err := apiServerGet(callCtx, config, "/metrics", nil)
	if err != nil {
		return nil, fmt.Errorf("the /metrics of %s: %w", config.Host, err)
	}
	return body, nil
}

// apiServerGet GETs path with params from the API server config reaches.
func apiServerGet(ctx context.Context, config *rest.Config, path string, params map[string]string) ([]byte, error) {
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	request := client.Discovery().RESTClient().Get().AbsPath(path)
	for k, v := range params {
		request.Param(k, v)
	}
	return request.DoRaw(ctx)
}

// HTTPPprof reads the /debug/pprof of the process serving baseURL with
// client, such as an etcd member with --enable-pprof, each read bounded by
// timeout.
func HTTPPprof(name, baseURL string, client *http.Client, timeout time.Duration) PprofSource {
	return PprofSource{Name: name, Get: func(ctx context.Context, kind string, params map[string]string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		query := url.Values{}
		for k, v := range params {
			query.Set(k, v)
		}
		request, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/debug/pprof/"+kind+"?"+query.Encode(), nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(request)
		if err != nil {
			return nil, err
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s: %s", resp.Status, body)
		}
		return body, err
	}}
}

// SaveProfile saves the pprof profile kind of s to file.
func SaveProfile(ctx context.Context, s PprofSource, kind string, params map[string]string, file string) error {
	body, err := s.Get(ctx, kind, params)
	if err != nil {
		return fmt.Errorf("%s profile of %s: %w", kind, s.Name, err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Wrote a profile", "file", file)
	return os.WriteFile(file, body, 0o644)
}

// CPUProfiles are CPU profiles being taken of several processes at once,
// so that what a load costs each can be read from the profiles of the very
// load measured.
type CPUProfiles struct {
	wg   sync.WaitGroup
	mu   sync.Mutex
	errs []error
}

// StartCPUProfiles starts a CPU profile of seconds of each source, written
// to file(source).
func StartCPUProfiles(ctx context.Context, sources []PprofSource, seconds int, file func(PprofSource) string) *CPUProfiles {
	p := &CPUProfiles{}
	for _, s := range sources {
		p.wg.Go(func() {
			if err := SaveProfile(ctx, s, "profile", map[string]string{"seconds": strconv.Itoa(seconds)}, file(s)); err != nil {
				p.mu.Lock()
				p.errs = append(p.errs, err)
				p.mu.Unlock()
			}
		})
	}
	return p
}

// Wait waits for the profiles and returns the first error. A nil
// CPUProfiles (profiling off) has none.
func (p *CPUProfiles) Wait() error {
	if p == nil {
		return nil
	}
	p.wg.Wait()
	if len(p.errs) > 0 {
		return p.errs[0]
	}
	return nil
}
