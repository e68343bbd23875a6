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

// Package cachetest gives the unit tests pod caches that hold what the
// binaries' caches hold.
package cachetest

import (
	"k8s.io/client-go/tools/cache"

	"github.com/evictionrequest/apiserver/pkg/util/cachetransform"
)

// TrimmedPods is a pod cache that a test fills by hand and that holds what
// the binaries' pod caches hold: every pod it is given through
// cachetransform.TrimPod. A controller's test that reads a field the
// binaries' caches drop then fails as the binary would.
func TrimmedPods(indexer cache.Indexer) cache.Indexer {
	return trimmedPods{indexer}
}

type trimmedPods struct{ cache.Indexer }

func (c trimmedPods) Add(obj any) error {
	trimmed, err := cachetransform.TrimPod(obj)
	if err != nil {
		return err
	}
	return c.Indexer.Add(trimmed)
}

func (c trimmedPods) Update(obj any) error {
	trimmed, err := cachetransform.TrimPod(obj)
	if err != nil {
		return err
	}
	return c.Indexer.Update(trimmed)
}
