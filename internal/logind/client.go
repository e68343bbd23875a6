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

package logind

import (
	"context"
	"fmt"

	"github.com/godbus/dbus/v5"
)

// Connect connects to the bus at address (unix:path=...), as the kubelet
// connects to the system bus of DBUS_SYSTEM_BUS_ADDRESS.
func Connect(ctx context.Context, address string, opts ...dbus.ConnOption) (*dbus.Conn, error) {
	conn, err := dbus.Connect(address, append([]dbus.ConnOption{dbus.WithContext(ctx)}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("connecting to the bus %s: %w", address, err)
	}
	return conn, nil
}

// PowerOff asks the logind of the bus at address to shut the machine down
// gracefully, as systemctl poweroff does.
func PowerOff(ctx context.Context, address string) error {
	conn, err := Connect(ctx, address)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	return conn.Object(BusName, ObjectPath).CallWithContext(ctx, ManagerInterface+".PowerOff", 0, false).Err
}

// CancelShutdown asks the logind of the bus at address to call off the
// shutdown under way, and says whether there was one it could call off.
func CancelShutdown(ctx context.Context, address string) (bool, error) {
	conn, err := Connect(ctx, address)
	if err != nil {
		return false, err
	}
	defer func() { _ = conn.Close() }()
	var canceled bool
	err = conn.Object(BusName, ObjectPath).CallWithContext(ctx, ManagerInterface+".CancelScheduledShutdown", 0).Store(&canceled)
	return canceled, err
}
