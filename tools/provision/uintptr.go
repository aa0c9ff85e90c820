package provision

import "unsafe"

// uintptrOf is the address of b's first byte, to align O_DIRECT buffers.
func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
