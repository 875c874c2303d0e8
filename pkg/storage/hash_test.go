package storage

import (
	"testing"

	"github.com/cespare/xxhash/v2"
)

func TestHashes(t *testing.T) {
	if FrameHash("a", "libb.so", false) == FrameHash("alibb.so", "", false) || FrameHash("f", "/lib/libc.so.6", false) == FrameHash("f", "/bin/app", false) || FrameHash("f", "/bin/app", true) == FrameHash("f", "/bin/app", false) {
		t.Error("frame hash ignores the name/module boundary or the module")
	}
	if FrameHash("f", "/usr/lib/libm.so.6", false) != xxhash.Sum64String("f\x00libm.so") || FrameHash("f", "/opt/app/1.2/app", true) != xxhash.Sum64String("f\x00\x00i") {
		t.Error("frame hash is not xxhash64(name NUL module identity)")
	}
	long := make([]uint64, 200) // crosses StackHash's 64-word chunks
	for i := range long {
		long[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	buf := make([]byte, 0, 8*len(long))
	for _, h := range long {
		for b := range 8 {
			buf = append(buf, byte(h>>(8*b)))
		}
	}
	tests := []struct {
		name  string
		stack []uint64
	}{
		{"empty", nil}, {"one", long[:1]}, {"64", long[:64]}, {"65", long[:65]}, {"200", long},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := StackHash(tt.stack), xxhash.Sum64(buf[:8*len(tt.stack)]); got != want {
				t.Errorf("StackHash = %x, want %x", got, want)
			}
		})
	}
	if StackHash([]uint64{1, 2}) == StackHash([]uint64{2, 1}) {
		t.Error("stack hash ignores frame order")
	}
}
