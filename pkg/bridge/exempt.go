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

package bridge

import (
	"context"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// Exempt lets the evictions of user through untouched: the identity the
// controllers evict as, which its process learns once it runs.
func (b *Bridge) Exempt(user string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.exempt[user] = true
}

func (b *Bridge) exempted(user string) bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.exempt[user]
}

// ExemptSelf exempts the identity of kube, as kube-apiserver knows it
// (a SelfSubjectReview), retrying until it succeeds or ctx ends: the
// controllers of the process evict as that identity.
func (b *Bridge) ExemptSelf(ctx context.Context, kube kubernetes.Interface) {
	_ = wait.PollUntilContextCancel(ctx, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		callCtx, cancel := context.WithTimeout(ctx, b.cfg.CallTimeout)
		defer cancel()
		review, err := kube.AuthenticationV1().SelfSubjectReviews().Create(callCtx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			klog.FromContext(ctx).Error(err, "Learning the identity the controllers evict as; retrying")
			return false, nil
		}
		b.Exempt(review.Status.UserInfo.Username)
		klog.FromContext(ctx).V(2).Info("The eviction API bridge lets the controllers' own evictions through", "user", review.Status.UserInfo.Username)
		return true, nil
	})
}
