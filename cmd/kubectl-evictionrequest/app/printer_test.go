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

package app

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

func TestLinePrinterPrintsChangesOnly(t *testing.T) {
	var out bytes.Buffer
	p := newLinePrinter(&out)
	hb := now.Add(-10 * time.Second)
	intercepted := drain.PodProgress{Namespace: "shop", Name: "db-0", State: drain.StateIntercepted,
		Request: participant.Status{Exists: true, ActiveInterceptor: "migrator.example.com", LastHeartbeat: &hb, Message: "copying"}}
	evicting := drain.PodProgress{Namespace: "shop", Name: "web-0", State: drain.StateEvicting, Request: participant.Status{Exists: true}}
	pods := []drain.PodProgress{intercepted, evicting}
	p.update(drain.Summarize(pods), pods, now)
	first := out.String()
	for _, want := range []string{
		"pod shop/db-0: Intercepted: interceptor migrator.example.com is active, last heartbeat 10s ago: copying\n",
		"pod shop/web-0: Evicting\n",
		"0/2 pods gone, 1 intercepted, 1 evicting\n",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("first output lacks %q:\n%s", want, first)
		}
	}

	// Only ages changed: nothing is printed.
	out.Reset()
	p.update(drain.Summarize(pods), pods, now.Add(time.Minute))
	if out.Len() != 0 {
		t.Errorf("printed %q although only ages changed", out.String())
	}

	// web-0 is gone, its request not complete yet; later messages of a
	// gone pod are not repeated.
	gone := drain.PodProgress{Namespace: "shop", Name: "web-0", State: drain.StateGone, Request: participant.Status{Exists: true, Message: "Pod web-0 was deleted."}}
	pods = []drain.PodProgress{intercepted, gone}
	p.update(drain.Summarize(pods), pods, now)
	if got, want := out.String(), "pod shop/web-0: Gone\n0/2 pods gone, 1 intercepted, 1 completing\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
	out.Reset()
	gone.Request.Complete, gone.Request.Message = true, "Completed."
	pods = []drain.PodProgress{intercepted, gone}
	p.update(drain.Summarize(pods), pods, now)
	if got, want := out.String(), "1/2 pods gone, 1 intercepted\n"; got != want {
		t.Errorf("output %q for a pod whose request completed, want %q", got, want)
	}
}
