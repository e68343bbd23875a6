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

package benchutil

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/evictionrequest/apiserver/internal/localcluster"
)

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat's
// times: 100 on every Linux architecture Go builds for.
const clockTicks = 100

// ProcStatusKiB is a field of /proc/<pid>/status in kB, such as VmRSS.
func ProcStatusKiB(pid int, field string) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if name, value, ok := strings.Cut(line, ":"); ok && name == field {
			return strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, field)
}

// CPUSeconds is the CPU time the process pid used so far, user and
// system.
func CPUSeconds(pid int) (float64, error) {
	fields, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	utime, err1 := strconv.ParseFloat(fields[statField(14)], 64)
	stime, err2 := strconv.ParseFloat(fields[statField(15)], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected utime %q or stime %q", pid, fields[statField(14)], fields[statField(15)])
	}
	return (utime + stime) / clockTicks, nil
}

// ProcessStart is when the process pid started: its age is the system's
// uptime (/proc/uptime) less its start time after boot (field 22 of
// /proc/<pid>/stat, in clock ticks), both to the hundredth of a second.
func ProcessStart(pid int) (time.Time, error) {
	fields, err := statFields(pid)
	if err != nil {
		return time.Time{}, err
	}
	uptime, err := os.ReadFile("/proc/uptime")
	now := time.Now()
	if err != nil {
		return time.Time{}, err
	}
	ticks, err := strconv.ParseFloat(fields[statField(22)], 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("/proc/%d/stat: unexpected starttime %q", pid, fields[statField(22)])
	}
	up, err := strconv.ParseFloat(strings.Fields(string(uptime))[0], 64)
	if err != nil {
		return time.Time{}, err
	}
	age := up - ticks/clockTicks
	return now.Add(-time.Duration(age * float64(time.Second))), nil
}

// statFields are the fields of /proc/<pid>/stat after the command name:
// index statField(n) of them is field n of proc(5).
func statFields(pid int) ([]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	fields, ok := parseStat(string(data))
	if !ok {
		return nil, fmt.Errorf("/proc/%d/stat: unexpected %q", pid, data)
	}
	return fields, nil
}

// parseStat splits a /proc/<pid>/stat line after the command name, which
// is in parentheses and may itself hold spaces and ") ": proc(5) bounds it
// by the last ')'.
func parseStat(stat string) ([]string, bool) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return nil, false
	}
	fields := strings.Fields(stat[end+1:])
	return fields, len(fields) >= statField(22)+1
}

// statField is the index in statFields of field n of proc(5), numbered
// from 1 (pid); statFields start at field 3 (state).
func statField(n int) int {
	return n - 3
}

// CPUSample is the CPU seconds processes used so far, by pid.
type CPUSample map[int]ProcessCPU

// ProcessCPU is the CPU seconds one process, named Name, used so far.
type ProcessCPU struct {
	Name    string
	Seconds float64
}

// CPUByProcess samples the CPU each running process of processes used so
// far. On a machine whose cores a load saturates, where its time goes is
// where its CPU goes. A process that exited is left out.
func CPUByProcess(processes []*localcluster.Process) CPUSample {
	sample := CPUSample{}
	for _, p := range processes {
		select {
		case <-p.Done():
			continue
		default:
		}
		pid := p.Pid()
		if seconds, err := CPUSeconds(pid); err == nil {
			sample[pid] = ProcessCPU{Name: p.Name, Seconds: seconds}
		}
	}
	return sample
}

// CPUSince is the CPU seconds each of processes used since before (a
// CPUByProcess of the same processes), by name.
func CPUSince(processes []*localcluster.Process, before CPUSample) map[string]float64 {
	return before.usedBy(CPUByProcess(processes))
}

// usedBy is what each process used between s and after, by name. Samples
// are by pid because a process restarted in between (a harness restarts
// servers) is another process: its time all falls after s, and what the
// one it replaced used before exiting is lost rather than subtracted from
// it.
func (s CPUSample) usedBy(after CPUSample) map[string]float64 {
	used := map[string]float64{}
	for pid, now := range after {
		was, ok := s[pid]
		if ok && was.Name != now.Name {
			// The pid was reused by another of the processes.
			ok = false
		}
		if ok {
			used[now.Name] += now.Seconds - was.Seconds
		} else {
			used[now.Name] += now.Seconds
		}
	}
	return used
}
