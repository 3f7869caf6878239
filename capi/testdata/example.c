/* example: read a .wmz file at random, copy its last episode to a new
 * file, and find the states nearest one of it, through the C interface
 * (wmzip.h). The model may be a family: the file is then read, copied and
 * searched with the member that wrote it, whose shape its states have.
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
	wmz_codec codec = 0, used = 0;
	wmz_file file = 0;
	wmz_writer out = 0;
	wmz_search search = 0;
	wmz_codec_info info;
	int64_t lens[64];
	size_t episodes = 0, members = 0;
	int rc = 1;

	if (argc != 4) {
		fprintf(stderr, "usage: example model.wmm in.wmz out.wmz\n");
		return 2;
	}
	if (wmz_codec_load(argv[1], &codec) != WMZ_OK)
		return fail(argv[1]);
	if (wmz_codec_members(codec, NULL, 0, &members) != WMZ_ERR_BUFFER)
		return fail("members");
	if (wmz_file_open(argv[2], codec, "{\"threads\": 2}", &file) != WMZ_OK)
		return fail(argv[2]);
	/* The codec the file is read with: of a family, the member that wrote it. */
	if (wmz_file_codec(file, &used) != WMZ_OK || wmz_codec_describe(used, &info) != WMZ_OK)
		return fail("describe");
	if (wmz_file_episodes(file, lens, 64, &episodes) != WMZ_OK)
		return fail("episodes");
	printf("%s: %zu episodes, states of %lld slots x %lld codes below %lld, model %s (of %zu members)\n", argv[2],
	       episodes, (long long)info.slots, (long long)info.subspaces, (long long)info.alphabet, info.model_id,
	       members);
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
		if (wmz_writer_create(argv[3], used, NULL, &out) != WMZ_OK) {
			fail(argv[3]);
			goto done;
		}
		if (wmz_writer_begin(out, "{\"copy\": true}", 14) != WMZ_OK ||
		    wmz_writer_codes(out, actions, states, codes, states * n, 2) != WMZ_OK ||
		    wmz_writer_close(out) != WMZ_OK) {
			fail("write");
			goto done;
		}
		/* The 3 states of the file nearest state t, by its codes. */
		{
			const char *paths[1];
			int64_t ep[3], st[3];
			double dist[3];
			size_t need = 0, i;
			paths[0] = argv[2];
			if (wmz_search_open(paths, 1, used, NULL, &search) != WMZ_OK) {
				fail("search");
				goto done;
			}
			if (wmz_search_codes(search, one, n, 2, 1, 3, NULL, NULL, NULL, NULL, NULL, 0, &need) != WMZ_ERR_BUFFER ||
			    need != 3 || wmz_search_codes(search, one, n, 2, 1, 3, NULL, ep, st, NULL, dist, 3, &need) != WMZ_OK) {
				fail("search codes");
				goto done;
			}
			for (i = 0; i < 3; i++)
				printf("nearest state %zu: episode %lld, step %lld, distance %g\n", i, (long long)ep[i],
				       (long long)st[i], dist[i]);
		}
		rc = 0;
	done:
		free(one);
		free(codes);
		free(actions);
	}
	wmz_writer_free(out);
	wmz_search_close(search);
	wmz_file_close(file);
	wmz_codec_free(used);
	wmz_codec_free(codec);
	return rc;
}
