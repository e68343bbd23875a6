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

	"sigs.k8s.io/yaml"
)

// ReleaseComponent is the component every overlay includes to pin the
// image of a release.
const ReleaseComponent = "components/release/kustomization.yaml"

// ImageName is the name the manifests give the project's image, which the
// release component maps to a registry and a tag.
const ImageName = "evictionrequest-apiserver"

// releaseComponent is the part of ReleaseComponent a release rewrites.
type releaseComponent struct {
	Images []struct {
		Name    string `json:"name"`
		NewName string `json:"newName"`
		NewTag  string `json:"newTag"`
	} `json:"images"`
}

// ReleaseImage is the image the overlays deploy: repository:tag.
func ReleaseImage() (string, error) {
	data, err := manifests.ReadFile(ReleaseComponent)
	if err != nil {
		return "", err
	}
	var c releaseComponent
	if err := yaml.Unmarshal(data, &c); err != nil {
		return "", err
	}
	for _, image := range c.Images {
		if image.Name == ImageName {
			return image.NewName + ":" + image.NewTag, nil
		}
	}
	return "", fmt.Errorf("%s pins no image named %s", ReleaseComponent, ImageName)
}
