package main

// #include "capi.h"
import "C"

import (
	"unsafe"

	"github.com/wmzip/wmzip/capi/internal/capi"
)

//export wmz_catalog_update
func wmz_catalog_update(root *C.wmz_cchar, options *C.wmz_cchar, buf *C.char, capacity C.size_t, size *C.size_t) (rc C.int) {
	defer guard(&rc)
	r, err := str(root, "root")
	if err != nil {
		return status(err)
	}
	b, err := capi.UpdateCatalog(r, text(options))
	if err != nil {
		return status(err)
	}
	return status(output(b, unsafe.Pointer(buf), capacity, size, true))
}

//export wmz_catalog_load
func wmz_catalog_load(name *C.wmz_cchar, buf *C.char, capacity C.size_t, size *C.size_t) (rc C.int) {
	defer guard(&rc)
	n, err := str(name, "name")
	if err != nil {
		return status(err)
	}
	b, err := capi.LoadCatalog(n)
	if err != nil {
		return status(err)
	}
	return status(output(b, unsafe.Pointer(buf), capacity, size, true))
}
