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
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/internal/logind"
)

// nodeCallTimeout bounds a call to a node's logind.
const nodeCallTimeout = 10 * time.Second

// nodeUsage is the help of local-up node.
const nodeUsage = `usage: local-up node ACTION NODE [--dir=_output/local]

Acts on a node of a running local control plane that the real kubelet runs
(kubectl get nodes -l ` + localcluster.KubeletNodeLabel + `):
  shutdown  shut it down gracefully, as systemctl poweroff: logind signals
            PrepareForShutdown, the kubelet stops the pods within its
            shutdownGracePeriod, then the machine powers off
  cancel    call a shutdown under way off: logind signals PrepareForShutdown(false)
  kill      cut its power: the kubelet dies without a word (a non-graceful
            shutdown; then kubectl taint node NODE
            node.kubernetes.io/out-of-service=nodeshutdown:NoExecute)
`

// nodeCommand runs local-up node ACTION NODE and returns the exit code.
func nodeCommand(args []string) int {
	fs := flag.NewFlagSet("local-up node", flag.ContinueOnError)
	dir := fs.String("dir", "_output/local", "Directory of the running local control plane.")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), nodeUsage)
		fs.PrintDefaults()
	}
	if len(args) < 2 {
		fs.Usage()
		return 2
	}
	action, node := args[0], args[1]
	if err := fs.Parse(args[2:]); err != nil {
		return 2
	}
	if err := nodeAction(action, *dir, node); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	return 0
}

// nodeAction does action to node of the cluster in dir.
func nodeAction(action, dir, node string) error {
	if action == "kill" {
		if err := localcluster.KillKubeletNode(dir, node); err != nil {
			return err
		}
		fmt.Printf("node/%s powered off without a shutdown\n", node)
		return nil
	}
	bus, err := localcluster.KubeletNodeBus(dir, node)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), nodeCallTimeout)
	defer cancel()
	switch action {
	case "shutdown":
		if err := logind.PowerOff(ctx, bus); err != nil {
			return err
		}
		fmt.Printf("node/%s is shutting down\n", node)
	case "cancel":
		canceled, err := logind.CancelShutdown(ctx, bus)
		if err != nil {
			return err
		}
		if !canceled {
			return fmt.Errorf("node %s has no shutdown under way to call off", node)
		}
		fmt.Printf("node/%s: shutdown called off\n", node)
	default:
		return fmt.Errorf("unknown action %q: shutdown, cancel or kill", action)
	}
	return nil
}
