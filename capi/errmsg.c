/* The message of each thread's last error: an exported Go function runs
 * on its C caller's thread, so thread-local storage is the caller's. */
#include "capi.h"

static __thread char *last_error;

__attribute__((visibility("hidden"))) void wmz_set_error(char *msg) {
	free(last_error);
	last_error = msg;
}

const char *wmz_errmsg(void) {
	return last_error != NULL ? last_error : "";
}
