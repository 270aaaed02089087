// main.go: a Go program whose time is in one loop of hot (lines 15-16),
// for source lines of Go binaries, which carry no .debug_aranges. Built by
// tests/e2e/toolchains.sh: go build -o gohot main.go
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

//go:noinline
func hot(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i % 7
	}
	return s
}

func main() {
	ms := 300
	if len(os.Args) > 1 {
		ms, _ = strconv.Atoi(os.Args[1])
	}
	end := time.Now().Add(time.Duration(ms) * time.Millisecond)
	s := 0
	for time.Now().Before(end) {
		s += hot(100000)
	}
	fmt.Println(s)
}
