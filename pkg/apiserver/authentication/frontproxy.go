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

package authentication

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"net/http"
	"slices"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	"k8s.io/utils/clock"
	"k8s.io/utils/lru"
)

const (
	// frontProxyVerifiedFor is how long a verified front-proxy certificate
	// chain is trusted before it is verified again (never past the
	// expiry of a certificate in it).
	frontProxyVerifiedFor = time.Minute
	// frontProxyChains bounds how many verified chains are remembered; a
	// cluster has one front-proxy certificate per kube-apiserver.
	frontProxyChains = 64
)

// frontProxyAuthenticator authenticates the requests kube-apiserver's
// aggregator forwards, as k8s.io/apiserver's request-header authenticator
// does (a client certificate of the request-header CA with an allowed
// common name, then the user from the headers), except that it remembers
// for frontProxyVerifiedFor which certificate chains it verified. The
// aggregator presents the same certificate on every request, and
// verifying its signature on each one (an ECDSA or RSA verification) showed
// in the server's CPU profile under a load of creates (make bench-system).
//
// A chain is remembered together with the CA bundle it was verified
// against, so a rotated bundle verifies again; a request it does not
// authenticate is left to the server's own authenticator, which verifies
// again and says why it refuses.
type frontProxyAuthenticator struct {
	config  *authenticatorfactory.RequestHeaderConfig
	headers authenticator.Request
	clock   clock.PassiveClock
	// verified maps a chainKey to the time until which the chain counts
	// as verified.
	verified *lru.Cache
}

// NewFrontProxyAuthenticator authenticates what config describes: the
// request-header options RecommendedOptions applied.
func NewFrontProxyAuthenticator(config *authenticatorfactory.RequestHeaderConfig, clock clock.PassiveClock) authenticator.Request {
	return &frontProxyAuthenticator{
		config:   config,
		headers:  headerrequest.NewDynamic(config.UsernameHeaders, config.UIDHeaders, config.GroupHeaders, config.ExtraHeaderPrefixes),
		clock:    clock,
		verified: lru.New(frontProxyChains),
	}
}

// AuthenticateRequest implements authenticator.Request.
func (a *frontProxyAuthenticator) AuthenticateRequest(req *http.Request) (*authenticator.Response, bool, error) {
	if req.TLS == nil || len(req.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	chain := req.TLS.PeerCertificates
	if !a.trusted(chain) {
		return nil, false, nil
	}
	if names := a.config.AllowedClientNames.Value(); len(names) > 0 && !slices.Contains(names, chain[0].Subject.CommonName) {
		return nil, false, nil
	}
	return a.headers.AuthenticateRequest(req)
}

// trusted tells whether chain verifies against the request-header CA,
// from what it remembers when it can.
func (a *frontProxyAuthenticator) trusted(chain []*x509.Certificate) bool {
	now := a.clock.Now()
	key := chainKey(a.config.CAContentProvider.CurrentCABundleContent(), chain)
	if until, ok := a.verified.Get(key); ok && now.Before(until.(time.Time)) {
		return true
	}
	until, ok := a.verify(chain, now)
	if ok {
		a.verified.Add(key, until)
	}
	return ok
}

// verify verifies chain against the request-header CA at now, as a client
// certificate, and returns until when the result holds.
func (a *frontProxyAuthenticator) verify(chain []*x509.Certificate, now time.Time) (time.Time, bool) {
	opts, ok := a.config.CAContentProvider.VerifyOptions()
	if !ok {
		return time.Time{}, false
	}
	opts.CurrentTime = now
	if opts.Intermediates == nil && len(chain) > 1 {
		opts.Intermediates = x509.NewCertPool()
		for _, c := range chain[1:] {
			opts.Intermediates.AddCert(c)
		}
	}
	verified, err := chain[0].Verify(opts)
	if err != nil {
		return time.Time{}, false
	}
	until := now.Add(frontProxyVerifiedFor)
	for _, c := range verified[0] {
		if c.NotAfter.Before(until) {
			until = c.NotAfter
		}
	}
	return until, true
}

// chainKey identifies a certificate chain presented against a CA bundle.
func chainKey(caBundle []byte, chain []*x509.Certificate) [sha256.Size]byte {
	h := sha256.New()
	// The bundle's length keeps its end apart from the chain, whose
	// certificates, DER, each carry their own.
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(caBundle))))
	h.Write(caBundle)
	for _, c := range chain {
		h.Write(c.Raw)
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}
