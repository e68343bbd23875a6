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

package artifacts

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ImageName is the name of the project's image, the last part of its
// repository.
const ImageName = "evictionrequest-apiserver"

// ReleaseImage is the image the overlays deploy, repository:tag, as the
// chart pins it (image.repository, "v" + appVersion): the image of
// evictionrequest-apiserver in the default overlay.
func ReleaseImage() (string, error) {
	data, err := manifests.ReadFile("overlays/default/install.yaml")
	if err != nil {
		return "", err
	}
	objects, err := Decode(data)
	if err != nil {
		return "", err
	}
	for _, obj := range objects {
		if obj.GetKind() != "Deployment" || obj.GetName() != ImageName {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			if image, ok := c.(map[string]any)["image"].(string); ok {
				return image, nil
			}
		}
	}
	return "", fmt.Errorf("the default overlay has no Deployment %s with an image", ImageName)
}
