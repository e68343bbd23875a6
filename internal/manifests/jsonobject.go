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

package manifests

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// jsonObject is a JSON object whose members keep their order, so that the
// generated schema reads in the order of values.yaml (encoding/json sorts
// a map's keys).
type jsonObject []jsonMember

// jsonMember is one member of a jsonObject: its value is anything
// encoding/json marshals, a json.RawMessage kept as written included.
type jsonMember struct {
	key   string
	value any
}

// with is o with key set to value: in its place when o has it, last
// otherwise.
func (o jsonObject) with(key string, value any) jsonObject {
	for i, m := range o {
		if m.key == key {
			out := append(jsonObject(nil), o...)
			out[i].value = value
			return out
		}
	}
	return append(o, jsonMember{key, value})
}

// has is true when o has key.
func (o jsonObject) has(key string) bool {
	for _, m := range o {
		if m.key == key {
			return true
		}
	}
	return false
}

// MarshalJSON writes the members in their order.
func (o jsonObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		key, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		value, err := json.Marshal(m.value)
		if err != nil {
			return nil, fmt.Errorf("member %s: %w", m.key, err)
		}
		b.Write(key)
		b.WriteByte(':')
		b.Write(value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// parseJSONObject reads a JSON object's members in their order, each value
// kept as written.
func parseJSONObject(data []byte) (jsonObject, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object: %s", data)
	}
	var o jsonObject
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		o = append(o, jsonMember{tok.(string), value})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value: %s", data)
	}
	return o, nil
}
