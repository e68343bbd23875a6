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

package main

import (
	"bufio"
	"bytes"
	"context"
	"maps"
	"regexp"
	"slices"
	"strconv"

	"k8s.io/client-go/rest"

	"github.com/evictionrequest/apiserver/internal/benchutil"
	"github.com/evictionrequest/apiserver/internal/promtext"
)

// writeCounts are kube-apiserver's write requests by "VERB resource"
// (resource/subresource), from its apiserver_request_total.
type writeCounts map[string]float64

var (
	requestTotal = regexp.MustCompile(`^apiserver_request_total\{(.*)\} ([0-9.e+]+)$`)
	writeVerbs   = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "APPLY": true, "DELETE": true}
)

// scrapeWrites reads the write requests so far of the API server config
// reaches (kube-apiserver, or our server).
func scrapeWrites(ctx context.Context, config *rest.Config) (writeCounts, error) {
	body, err := benchutil.APIServerMetrics(ctx, config)
	if err != nil {
		return nil, err
	}
	counts := writeCounts{}
	scanner := bufio.NewScanner(bytes.NewReader(body))
	scanner.Buffer(nil, 1<<20)
	for scanner.Scan() {
		m := requestTotal.FindStringSubmatch(scanner.Text())
		if m == nil {
			continue
		}
		verb, _ := promtext.Label(m[1], "verb")
		if !writeVerbs[verb] {
			continue
		}
		resource, _ := promtext.Label(m[1], "resource")
		if sub, _ := promtext.Label(m[1], "subresource"); sub != "" {
			resource += "/" + sub
		}
		n, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return nil, err
		}
		counts[verb+" "+resource] += n
	}
	return counts, scanner.Err()
}

// perPod is the writes since earlier, divided by pods: the keys with at
// least 0.1 per pod, and their total under "total".
func (c writeCounts) perPod(earlier writeCounts, pods int) map[string]float64 {
	out := map[string]float64{}
	total := 0.0
	for _, key := range slices.Sorted(maps.Keys(c)) {
		per := (c[key] - earlier[key]) / float64(pods)
		total += per
		if per >= 0.1 {
			out[key] = per
		}
	}
	out["total"] = total
	return out
}
