package main

import "golang.org/x/sys/unix"

// ioctlReadTermios is the request that reads a terminal's settings, which only a terminal has.
const ioctlReadTermios = unix.TCGETS
