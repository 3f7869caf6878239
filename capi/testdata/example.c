/* example: read a .wmz file at random and copy its last episode to a new
 * file, through the C interface (wmzip.h).
 *
 *     cc -I capi capi/testdata/example.c -L. -lwmzip -o example
 *     ./example model.wmm in.wmz out.wmz
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "wmzip.h"

static int fail(const char *what) {
	fprintf(stderr, "example: %s: %s\n", what, wmz_errmsg());
	return 1;
}

int main(int argc, char **argv) {
	wmz_codec codec = 0;
	wmz_file file = 0;
	wmz_writer out = 0;
	wmz_codec_info info;
	int64_t lens[64];
	size_t episodes = 0;
	int rc = 1;

	if (argc != 4) {
		fprintf(stderr, "usage: example model.wmm in.wmz out.wmz\n");
		return 2;
	}
	if (wmz_codec_load(argv[1], &codec) != WMZ_OK)
		return fail(argv[1]);
	if (wmz_codec_describe(codec, &info) != WMZ_OK)
		return fail("describe");
	if (wmz_file_open(argv[2], codec, "{\"threads\": 2}", &file) != WMZ_OK)
		return fail(argv[2]);
	if (wmz_file_episodes(file, lens, 64, &episodes) != WMZ_OK)
		return fail("episodes");
	printf("%s: %zu episodes, states of %lld slots x %lld codes below %lld, model %s\n", argv[2], episodes,
	       (long long)info.slots, (long long)info.subspaces, (long long)info.alphabet, info.model_id);
	{
		int64_t e = (int64_t)episodes - 1, t = lens[e] / 2, action = 0;
		size_t n = (size_t)(info.slots * info.subspaces), states = (size_t)lens[e];
		uint16_t *one = (uint16_t *)malloc(n * sizeof *one);
		uint16_t *codes = (uint16_t *)malloc(states * n * sizeof *codes);
		int64_t *actions = (int64_t *)malloc(states * sizeof *actions);
		if (one == NULL || codes == NULL || actions == NULL)
			goto done;
		if (wmz_file_state(file, e, t, &action, one, n, 2) != WMZ_OK) {
			fail("state");
			goto done;
		}
		printf("episode %lld, step %lld: action %lld, first code %u\n", (long long)e, (long long)t,
		       (long long)action, one[0]);
		if (wmz_file_states(file, e, 0, lens[e], actions, codes, states * n, 2, NULL, 0) != WMZ_OK) {
			fail("states");
			goto done;
		}
		if (wmz_writer_create(argv[3], codec, NULL, &out) != WMZ_OK) {
			fail(argv[3]);
			goto done;
		}
		if (wmz_writer_begin(out, "{\"copy\": true}", 14) != WMZ_OK ||
		    wmz_writer_codes(out, actions, states, codes, states * n, 2) != WMZ_OK ||
		    wmz_writer_close(out) != WMZ_OK) {
			fail("write");
			goto done;
		}
		rc = 0;
	done:
		free(one);
		free(codes);
		free(actions);
	}
	wmz_writer_free(out);
	wmz_file_close(file);
	wmz_codec_free(codec);
	return rc;
}
