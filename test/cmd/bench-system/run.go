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
	"context"
	"fmt"
	"slices"
	"time"

	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/evictionrequest/apiserver/internal/localcluster"
)

// listRepeats is how many LISTs of every object make one sample.
const listRepeats = 3

func run(ctx context.Context, o options) error {
	logger := klog.FromContext(ctx)
	cluster, err := localcluster.Start(ctx, localcluster.Config{
		Dir: o.dir, BinDir: o.binDir,
		Logf: func(format string, args ...any) { logger.Info(fmt.Sprintf(format, args...)) },
	})
	if err != nil {
		return err
	}
	defer cluster.Stop()
	res := newResults()
	b, err := setUp(ctx, o, cluster, res)
	if err != nil {
		return err
	}
	for round := range o.rounds {
		order := slices.Clone(targets)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, t := range order {
			logger.Info("Measuring", "round", round, "api", t.name)
			// The first round holds objects before it writes any, so that
			// its memory measures start from watch caches that have seen
			// no deletion (see measureHeld); later rounds write first.
			if round == 0 {
				if err := b.measureHeld(ctx, t, res, true); err != nil {
					return fmt.Errorf("round %d, %s: %w", round, t.name, err)
				}
			}
			if b.o.writes {
				if err := b.measureWrites(ctx, t, res); err != nil {
					return fmt.Errorf("round %d, %s: %w", round, t.name, err)
				}
			}
			if round > 0 {
				if err := b.measureHeld(ctx, t, res, false); err != nil {
					return fmt.Errorf("round %d, %s: %w", round, t.name, err)
				}
			}
		}
	}
	res.summarize()
	res.print(o)
	if err := res.writeJSON(o.out, o); err != nil {
		return err
	}
	return res.drawChart(o.chart)
}

// measureWrites runs the create and the status update phases of t for
// each user and client count.
func (b *bench) measureWrites(ctx context.Context, t target, res *results) error {
	maxClients := slices.Max(b.o.clients)
	for _, u := range b.users {
		requests := u.requests[t.name]
		for _, clients := range b.o.clients {
			phase := fmt.Sprintf("%d clients, %s", clients, u.name)
			create := requests.create
			cpu, err := b.phase(ctx, t, res, "creates/s, "+phase, "create p99, "+phase, clients, create, func(ctx context.Context) error {
				return b.waitSelected(ctx, t)
			})
			if err != nil {
				return fmt.Errorf("creates, %s: %w", phase, err)
			}
			if clients == maxClients {
				res.add("CPU per create, "+u.name, "ms", false, t.name, ms(cpu)/float64(b.o.ops))
			}

			// Each request's interceptor reports progress once, as
			// heartbeats do: a merge patch of /status.
			beat := func(ctx context.Context, i int) error {
				patch := fmt.Sprintf(`{"status":{"heartbeatTime":%q,"message":"step %d of %s"}}`,
					time.Now().UTC().Format(time.RFC3339), i, u.name)
				return requests.patchStatus(ctx, b.pods[i].uid, []byte(patch))
			}
			cpu, err = b.phase(ctx, t, res, "status updates/s, "+phase, "status update p99, "+phase, clients, beat, nil)
			if err != nil {
				return fmt.Errorf("status updates, %s: %w", phase, err)
			}
			if clients == maxClients {
				res.add("CPU per status update, "+u.name, "ms", false, t.name, ms(cpu)/float64(b.o.ops))
			}

			// A second requester joins each request as the SDK's requester
			// does: a server-side apply of its own entry of spec.requesters.
			cpu, err = b.phase(ctx, t, res, "server-side applies/s, "+phase, "server-side apply p99, "+phase, clients, requests.join, nil)
			if err != nil {
				return fmt.Errorf("server-side applies, %s: %w", phase, err)
			}
			if clients == maxClients {
				res.add("CPU per server-side apply, "+u.name, "ms", false, t.name, ms(cpu)/float64(b.o.ops))
			}
			if err := b.deleteAll(ctx, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// phase runs o.ops operations on clients workers, records their rate and
// p99 latency, and returns the CPU the control plane spent on them,
// including settle (the work the operations cause afterwards, such as our
// controller's selection write).
func (b *bench) phase(ctx context.Context, t target, res *results, rateName, p99Name string, clients int,
	op func(context.Context, int) error, settle func(context.Context) error) (time.Duration, error) {
	cpuBefore, err := b.cpuTime()
	if err != nil {
		return 0, err
	}
	profiles := b.startProfiles(ctx, t, rateName)
	start := time.Now()
	latencies, err := runConcurrently(ctx, clients, b.o.ops, op)
	if err != nil {
		return 0, err
	}
	elapsed := time.Since(start)
	if err := profiles.Wait(); err != nil {
		return 0, err
	}
	if settle != nil {
		if err := settle(ctx); err != nil {
			return 0, err
		}
	}
	cpuAfter, err := b.cpuTime()
	if err != nil {
		return 0, err
	}
	res.add(rateName, "1/s", true, t.name, float64(b.o.ops)/elapsed.Seconds())
	slices.Sort(latencies)
	res.add(p99Name, "ms", false, t.name, ms(latencies[len(latencies)*99/100]))
	return cpuAfter - cpuBefore, nil
}

// measureHeld creates o.objects objects of t as the admin, at most at
// o.createRate, measures the heap and resident memory they cost and, for
// ours, the time from each create to its selection; then the time of a LIST
// of all of them; and deletes them.
//
// The heap per object is the growth from holding half of the objects to
// holding all of them, so that what the first creates bring once (caches,
// connections, pools) is not counted. Only a phase that runs before any
// deletion of t's objects measures memory (withMemory): a watch cache keeps
// the events of deleted objects, with the objects, until new events push
// them out, so after a deletion new objects replace old ones in the heap and
// in the resident memory, and the growth understates what they cost, below
// zero at times.
func (b *bench) measureHeld(ctx context.Context, t target, res *results, withMemory bool) error {
	requests := b.users[0].requests[t.name]
	selections, err := b.watchSelections(ctx, t)
	if err != nil {
		return err
	}
	var rssBefore, heapAtHalf int64
	if withMemory {
		if rssBefore, err = b.rssBytes(); err != nil {
			return err
		}
	}
	created := make([]time.Time, b.o.objects)
	pace := rate.NewLimiter(rate.Limit(b.o.createRate), 1)
	create := func(ctx context.Context, i int) error {
		if err := pace.Wait(ctx); err != nil {
			return err
		}
		err := requests.create(ctx, i)
		created[i] = time.Now()
		return err
	}
	half := b.o.objects / 2
	start := time.Now()
	if _, err := runConcurrently(ctx, slices.Max(b.o.clients), half, create); err != nil {
		return err
	}
	if err := b.waitSelected(ctx, t); err != nil {
		return err
	}
	if withMemory {
		if heapAtHalf, err = b.heapBytes(ctx, b.holders(t)...); err != nil {
			return err
		}
		if err := b.saveHeapProfiles(ctx, t, "half"); err != nil {
			return err
		}
	}
	secondStart := time.Now()
	if _, err := runConcurrently(ctx, slices.Max(b.o.clients), b.o.objects-half, func(ctx context.Context, i int) error {
		return create(ctx, half+i)
	}); err != nil {
		return err
	}
	createRate := float64(b.o.objects-half) / time.Since(secondStart).Seconds()
	if err := b.waitSelected(ctx, t); err != nil {
		return err
	}
	if withMemory {
		rssAfter, err := b.rssBytes()
		if err != nil {
			return err
		}
		heapAtAll, err := b.heapBytes(ctx, b.holders(t)...)
		if err != nil {
			return err
		}
		res.add("heap per object held", "KiB", false, t.name, float64(heapAtAll-heapAtHalf)/float64(b.o.objects-half)/1024)
		res.add("RSS growth per 10k objects", "MiB", false, t.name, float64(rssAfter-rssBefore)/float64(b.o.objects)*10000/(1<<20))
		if err := b.saveHeapProfiles(ctx, t, "all"); err != nil {
			return err
		}
	}
	if selections != nil {
		byName := make(map[string]time.Time, len(created))
		for i, at := range created {
			byName[b.pods[i].uid] = at
		}
		p99, ok := selections.p99(byName)
		if !ok {
			return fmt.Errorf("the watch did not see every request selected")
		}
		res.addOurs(fmt.Sprintf("creates/s while measuring the time to selection (at most %g)", b.o.createRate), "1/s", createRate)
		res.addOurs(fmt.Sprintf("create to selection p99, %d creates", b.o.objects), "ms", ms(p99))
	}
	logger := klog.FromContext(ctx)
	logger.V(2).Info("Held objects created", "api", t.name, "seconds", time.Since(start).Seconds())

	var lists []float64
	for range listRepeats {
		start := time.Now()
		n, _, err := requests.list(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if n != b.o.objects {
			return fmt.Errorf("LIST returned %d objects, want %d", n, b.o.objects)
		}
		lists = append(lists, time.Since(start).Seconds())
	}
	res.add(fmt.Sprintf("LIST of %d objects", b.o.objects), "s", false, t.name, median(lists))
	return b.deleteAll(ctx, t)
}

func ms(d time.Duration) float64 {
	return float64(d) / float64(time.Millisecond)
}
