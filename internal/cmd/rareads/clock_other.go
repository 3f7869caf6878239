//go:build !linux

package main

func cpuNow() (int64, bool) { return 0, false }
