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

// Command models-schema prints the OpenAPI v2 definitions of the API types as
// one swagger document. hack/update-codegen.sh feeds it to
// applyconfiguration-gen so that the generated apply configurations know the
// list types and map keys that server-side apply merges by.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/evictionrequest/apiserver/pkg/generated/openapi"
)

func main() {
	if err := printSwagger(); err != nil {
		fmt.Fprintf(os.Stderr, "models-schema: %v\n", err)
		os.Exit(1)
	}
}

func printSwagger() error {
	definitions := openapi.GetOpenAPIDefinitions(func(name string) spec.Ref {
		return spec.MustCreateRef("#/definitions/" + name)
	})
	schemas := make(map[string]spec.Schema, len(definitions))
	for name, definition := range definitions {
		schemas[name] = v2Schema(definition)
	}
	return json.NewEncoder(os.Stdout).Encode(&spec.Swagger{SwaggerProps: spec.SwaggerProps{
		Swagger:     "2.0",
		Info:        &spec.Info{InfoProps: spec.InfoProps{Title: "EvictionRequest API", Version: "unversioned"}},
		Definitions: schemas,
	}})
}

// v2Schema prefers the OpenAPI v2 form a definition carries for types whose
// v3 schema cannot be expressed in v2; applyconfiguration-gen reads v2 only.
func v2Schema(definition common.OpenAPIDefinition) spec.Schema {
	if v2, ok := definition.Schema.Extensions[common.ExtensionV2Schema].(spec.Schema); ok {
		return v2
	}
	return definition.Schema
}
