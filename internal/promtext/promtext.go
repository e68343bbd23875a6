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

// Package promtext reads what a process's /metrics exposes in Prometheus'
// text format: one sample's value and a histogram's buckets. The
// benchmarks read them before and after what they measure.
package promtext

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Samples is the body of a /metrics.
type Samples []byte

// Value is the value of one sample, such as
// `go_memstats_heap_inuse_bytes` or `up{job="x"}`, and whether it is there.
func (s Samples) Value(sample string) (float64, bool) {
	scanner := bufio.NewScanner(bytes.NewReader(s))
	scanner.Buffer(nil, 1<<20)
	for scanner.Scan() {
		if name, value, ok := strings.Cut(scanner.Text(), " "); ok && name == sample {
			v, err := strconv.ParseFloat(value, 64)
			return v, err == nil
		}
	}
	return 0, false
}

// Histogram is a histogram's cumulative counts by upper bound.
type Histogram map[float64]float64

// Histogram sums the buckets of the histogram name (its _bucket series)
// over the series whose labels (the text between the braces, le aside)
// match; nil match takes every series.
func (s Samples) Histogram(name string, match func(labels string) bool) (Histogram, error) {
	prefix := name + "_bucket{"
	h := Histogram{}
	scanner := bufio.NewScanner(bytes.NewReader(s))
	scanner.Buffer(nil, 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		labels, value, ok := strings.Cut(line[len(prefix):], "} ")
		if !ok || (match != nil && !match(labels)) {
			continue
		}
		le, ok := Label(labels, "le")
		if !ok {
			continue
		}
		bound, err1 := strconv.ParseFloat(le, 64)
		count, err2 := strconv.ParseFloat(value, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("not a bucket of %s: %q", name, line)
		}
		h[bound] += count
	}
	return h, scanner.Err()
}

// Label is the value of the label key in a series' label list, such as
// `name="x",le="0.005"`.
func Label(labels, key string) (string, bool) {
	m := regexp.MustCompile(`(?:^|,)` + regexp.QuoteMeta(key) + `="([^"]*)"`).FindStringSubmatch(labels)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// Since is what h counted after earlier, an earlier scrape of the same
// histogram.
func (h Histogram) Since(earlier Histogram) Histogram {
	delta := Histogram{}
	for bound, count := range h {
		delta[bound] = count - earlier[bound]
	}
	return delta
}

// Count is the number of observations.
func (h Histogram) Count() float64 {
	return h[math.Inf(1)]
}

// Quantile estimates the q-quantile as Prometheus' histogram_quantile
// does: linearly within the bucket the rank falls in, the highest finite
// bound when it falls in +Inf.
func (h Histogram) Quantile(q float64) float64 {
	bounds := slices.Sorted(maps.Keys(h))
	rank := q * h.Count()
	lower, below := 0.0, 0.0
	for _, bound := range bounds {
		count := h[bound]
		if count >= rank {
			if math.IsInf(bound, 1) {
				return lower
			}
			if count == below {
				return bound
			}
			return lower + (bound-lower)*(rank-below)/(count-below)
		}
		lower, below = bound, count
	}
	return lower
}

// loopbackClient reads the /metrics of local processes: kube-controller-
// manager serves it over HTTPS with a self-signed certificate, which
// nothing else would trust.
var loopbackClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // loopback only, read-only metrics

// Get reads the /metrics at url, a loopback address over HTTP or HTTPS,
// within timeout, with client (one that presents credentials to a server
// that authorizes its scrapers), or anonymously when client is nil.
func Get(ctx context.Context, client *http.Client, url string, timeout time.Duration) (Samples, error) {
	if client == nil {
		client = loopbackClient
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return body, err
}
