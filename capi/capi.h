/* capi.h: what the Go files of the C library declare to cgo: the public
 * header, const types for the exports' parameters (so that cgo's
 * prototypes match wmzip.h's and the compiler checks them), and the
 * thread's error message (errmsg.c). */
#include <stdlib.h>
#include "wmzip.h"

typedef const char wmz_cchar;
typedef const void wmz_cvoid;
typedef const float wmz_cfloat;
typedef const int64_t wmz_cint64;
typedef const wmz_trajectory wmz_ctrajectory;
typedef const char *const wmz_cpath;

__attribute__((visibility("hidden"))) void wmz_set_error(char *msg);
