/*
 * wmzip.h: the C interface of wmzip, a compression codec and file format
 * for the memory of long-horizon agents (github.com/wmzip/wmzip).
 *
 * Build the library from the module's root with the Go toolchain:
 *
 *     go build -buildmode=c-shared -o libwmzip.so ./capi
 *
 * and link with -lwmzip. The Python package (python/) is built on it.
 *
 * Objects. A codec (the shared model: quantizer, world model, retention
 * gate; or a bundle of members, each a quantizer and world model of its
 * own, which wmz_codec_members lists), a file read at random, a writer, a
 * reader and a search (files searched for the nearest neighbours of a
 * query) are named by handles: 64-bit numbers, 0 for none. The library keeps the objects; a
 * handle is never reused, so a released one gives WMZ_ERR_CLOSED, never
 * another object. Releasing a handle twice is allowed and does nothing.
 *
 * Threads. Every function may be called from any thread. A codec is
 * immutable; a file's reads run concurrently (wmz_file_close waits for
 * the reads in flight), and so do a search's searches (wmz_search_close
 * waits for them); a writer or reader serializes its calls.
 *
 * Errors. Every function but wmz_errmsg and wmz_api_version returns a
 * status: WMZ_OK (0), WMZ_EOF (1) where documented, or a negative
 * WMZ_ERR_* code. After an error, wmz_errmsg() returns the library's
 * message for it, on the calling thread, until that thread's next error.
 *
 * Arrays. The caller owns every array; the library reads or writes it
 * during the call only and keeps no pointer to it. Sizes count elements,
 * not bytes. Codes are 8 or 16 bits wide (width 1 or 2: uint8_t or
 * uint16_t arrays); an 8-bit array holds the codes of a codec whose
 * alphabet is at most 256. A state is S slot vectors: S*M codes, or S*dim
 * floats (its observations, or their reconstruction), time-major.
 *
 * Variable-size outputs (model bytes, metadata, JSON) take a buffer, its
 * capacity and a size_t *size: *size receives the size of the output
 * (text without its terminating NUL); when buf is NULL or cap is too small
 * nothing is written and the call returns WMZ_ERR_BUFFER, so a caller can
 * ask for the size first. Text is NUL-terminated and needs cap >= *size+1.
 *
 * Options are a JSON object (NULL or "" for none); an unknown name is
 * WMZ_ERR_INPUT.
 */
#ifndef WMZIP_H
#define WMZIP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this interface, which wmz_api_version returns. */
#define WMZ_API_VERSION 1

typedef uint64_t wmz_codec;  /* a codec: model file (.wmm) in memory */
typedef uint64_t wmz_file;   /* a .wmz file open for random access */
typedef uint64_t wmz_writer; /* a .wmz file being written */
typedef uint64_t wmz_reader; /* a .wmz file read in order */
typedef uint64_t wmz_search; /* .wmz files searched for nearest neighbours */

/* Status codes. */
enum {
	WMZ_OK = 0,
	WMZ_EOF = 1,                /* the end of an episode, or of the file */
	WMZ_ERR_INPUT = -1,         /* an invalid argument */
	WMZ_ERR_CORRUPT = -2,       /* bytes that are not a valid .wmz or .wmm file */
	WMZ_ERR_CHECKSUM = -3,      /* a record whose checksum does not match */
	WMZ_ERR_MODEL_MISMATCH = -4,/* a codec other than the one the file names */
	WMZ_ERR_NO_MODEL = -5,      /* no codec given for a file that embeds none */
	WMZ_ERR_TOO_LARGE = -6,     /* beyond a memory limit */
	WMZ_ERR_CLOSED = -7,        /* a closed writer, file or reader; a released handle */
	WMZ_ERR_UNSUPPORTED = -8,   /* a valid file of a version this library does not read */
	WMZ_ERR_NOT_FOUND = -9,     /* no such file */
	WMZ_ERR_PERMISSION = -10,   /* permission denied */
	WMZ_ERR_IO = -11,           /* another error of the operating system */
	WMZ_ERR_BUFFER = -12,       /* an output buffer too small: *size says what is needed */
	WMZ_ERR_INTERNAL = -13,     /* a bug of the library, which it survived */
	WMZ_ERR_OTHER = -14,        /* anything else */
	WMZ_ERR_SIGNATURE = -15     /* a read with public_key refused: unsigned, another key, or altered */
};

/* wmz_api_version returns WMZ_API_VERSION of the library linked. */
int wmz_api_version(void);

/* wmz_errmsg returns the message of the calling thread's last error, or
 * "" if none. It stays valid until that thread's next error. */
const char *wmz_errmsg(void);

/* ---- Codecs ---------------------------------------------------------- */

/* What a codec is. */
typedef struct wmz_codec_info {
	int64_t slots;     /* S: slot vectors a state */
	int64_t subspaces; /* M: codes a slot vector; a state has S*M */
	int64_t alphabet;  /* K: every code is below it */
	int64_t dim;       /* floats a slot vector; 0: no quantizer (codes only) */
	int32_t has_gate;  /* 1: a retention gate, with which the lossy modes leave
	                    * codes out; 0: they code by rate and distortion
	                    * (codecs with a quantizer), or are refused */
	/* How the quantizer did on observations held out of its training:
	 * mean relative squared error and cosine over quantizer_vectors slot
	 * vectors (0 when the model records none). */
	int64_t quantizer_vectors;
	double quantizer_distortion;
	double quantizer_cosine;
	char model_id[64]; /* the model's ID in hex, NUL-terminated */
} wmz_codec_info;

/* A trajectory, as wmz_codec_train learns from it: T states in episodes,
 * as float observations, codes, or both (the observations are used unless
 * the option codes_only is set). */
typedef struct wmz_trajectory {
	int64_t states;               /* T */
	int64_t slots;                /* S */
	const float *obs;             /* T*S*dim floats, or NULL */
	int64_t dim;
	const void *codes;            /* T*S*subspaces codes, or NULL */
	int64_t subspaces;
	int32_t code_width;           /* 1 or 2 */
	const int64_t *actions;       /* T actions (-1: none known), or NULL: all -1 */
	const int64_t *episode_start; /* ascending offsets from 0, or NULL: one episode */
	int64_t episodes;             /* entries of episode_start */
} wmz_trajectory;

/* wmz_codec_load reads a codec from a model file (.wmm). */
int wmz_codec_load(const char *path, wmz_codec *out);

/* wmz_codec_read reads a codec from the bytes of a model file. */
int wmz_codec_read(const void *data, size_t size, wmz_codec *out);

/* wmz_codec_train builds a codec from a trajectory, exactly as `wmzip
 * train` does from the same arrays and options: quantizer ("family", the
 * default for float observations: a bundle of product quantizers of 256
 * centroids and 1 to 32 subspaces, each with its own world model and no
 * retention gate, chosen by the bits each writes at each distortion on
 * held-out episodes; or "single": one quantizer of subspaces (32) codes
 * below centroids (64), with a gate; giving subspaces, centroids or
 * quantizer_iters implies "single"), seed (1), quantizer_iters,
 * quantizer_sample, codes_only (false), alphabet (0: from the codes),
 * precision (16), max_ref (65536), capacity (1), gate_holdout (-1: one
 * episode in eight; 0: no gate), gate_bins ("modal" or "entropy"),
 * gate_for ("distortion" or "search"), level ("copy", "full" or "fast"),
 * max_states (262144). It can take minutes. */
int wmz_codec_train(const wmz_trajectory *t, const char *options, wmz_codec *out);

/* wmz_codec_bytes returns the bytes of the codec's model file. */
int wmz_codec_bytes(wmz_codec c, void *buf, size_t cap, size_t *size);

/* wmz_codec_save writes the codec's model file at path, atomically. */
int wmz_codec_save(wmz_codec c, const char *path);

/* wmz_codec_describe fills *info with what the codec is: a bundle's
 * shape and model ID are those of its finest member, which writes its
 * lossless files. */
int wmz_codec_describe(wmz_codec c, wmz_codec_info *info);

/* wmz_codec_members writes a new handle to each member of the codec to
 * members, which holds cap, coarsest first (free each with
 * wmz_codec_free); *n receives the number of members: a bundle's, or 1 for
 * a codec of one model, whose member is itself. When members is NULL or
 * cap is smaller, no handle is made and the call returns WMZ_ERR_BUFFER. */
int wmz_codec_members(wmz_codec c, wmz_codec *members, size_t cap, size_t *n);

/* wmz_codec_summary returns what the codec is as a JSON object: model_id,
 * slots, subspaces, alphabet, dim (null: codes only) and has_gate, as
 * wmz_codec_describe gives them; model_geometry {slots, subspaces,
 * alphabet}, the world model's own shape of a state (it may see several
 * slot vectors as one of its slots: the same slots*subspaces codes);
 * members, the model ID of each member, coarsest first; quantizer
 * {vectors, distortion, cosine} held out of its training, or null; and
 * calibration, for a codec of one model trained to code by rate and
 * distortion: [{lambda, distortion, bits_per_state}], by decreasing
 * lambda (null: +infinity, the quantizer's own codes), what episodes held
 * out of its training cost at each lambda and how far from their source
 * floats they came back; empty for a bundle (ask its members) and for
 * other codecs. */
int wmz_codec_summary(wmz_codec c, char *buf, size_t cap, size_t *size);

/* wmz_codec_quantize writes the codes of n floats of observations (whole
 * states) to codes, which holds cap codes of width bytes. */
int wmz_codec_quantize(wmz_codec c, const float *obs, size_t n, void *codes, size_t cap, int width);

/* wmz_codec_reconstruct writes the reconstructed slot vectors of n codes
 * (whole states) to obs, which holds cap floats. */
int wmz_codec_reconstruct(wmz_codec c, const void *codes, size_t n, int width, float *obs, size_t cap);

/* wmz_codec_free releases the handle; files and writers opened with the
 * codec keep working. */
int wmz_codec_free(wmz_codec c);

/* ---- Files: random access -------------------------------------------- */

/* wmz_file_open opens the .wmz file at path, read with codec c, or with
 * the model the file embeds when c is 0. When c is a bundle, the file is
 * read with the member that wrote it (wmz_file_codec). Options: threads
 * (chunks decoded ahead at once; default every core); public_key (the
 * text of a minisign public key file: the file must be signed by it, and
 * every chunk read is checked against its signed hash, SPEC.md 6.16);
 * min_generation (with public_key: refuse an older signed version). */
int wmz_file_open(const char *path, wmz_codec c, const char *options, wmz_file *out);

/* wmz_file_codec returns a new handle to the codec the file is read with
 * (free it with wmz_codec_free): the one given, the member of a bundle
 * given that wrote the file (a lossy file of a bundle is written by one
 * member; a lossless one by its finest, and read with the bundle), or the
 * model the file embeds. Its shape (wmz_codec_describe) is the shape of
 * the file's states. */
int wmz_file_codec(wmz_file f, wmz_codec *out);

/* wmz_file_episodes writes the number of states of each episode to lens,
 * which holds cap; *n receives the number of episodes (WMZ_ERR_BUFFER
 * when cap is smaller; lens may then be NULL). */
int wmz_file_episodes(wmz_file f, int64_t *lens, size_t cap, size_t *n);

/* wmz_file_state decodes state t of episode e: its action to *action and
 * its codes to codes (either may be NULL). */
int wmz_file_state(wmz_file f, int64_t e, int64_t t, int64_t *action, void *codes, size_t cap, int width);

/* wmz_file_obs decodes state t of episode e: its action to *action (may
 * be NULL) and its reconstructed slot vectors to obs (S*dim floats). */
int wmz_file_obs(wmz_file f, int64_t e, int64_t t, int64_t *action, float *obs, size_t cap);

/* wmz_file_states decodes states from to to-1 of episode e: their actions
 * (to-from), codes and reconstructed slot vectors, to whichever arrays
 * are not NULL. A whole episode decodes on the decoder threads. */
int wmz_file_states(wmz_file f, int64_t e, int64_t from, int64_t to, int64_t *actions,
                    void *codes, size_t codes_cap, int width, float *obs, size_t obs_cap);

/* wmz_file_meta returns the metadata (JSON text) of episode e; *size is 0
 * for none. */
int wmz_file_meta(wmz_file f, int64_t e, char *buf, size_t cap, size_t *size);

/* wmz_file_info returns the file's summary as a JSON object: episodes,
 * states, chunks, file_bytes, header_bytes, model_bytes, payload_bytes,
 * index_bytes, lambda (null: every coordinate coded), levels, embedded,
 * model_id (of the codec that wrote it: a bundle's member), ideal_bits,
 * retained, and distortion {slots, retention, source_slots, source,
 * source_cosine}: what the writer recorded of the distortion against the
 * lossless reconstruction and against the source floats. A file coded by
 * rate and distortion (a lossy file of a codec without a gate) has lambda
 * null and no levels, as a lossless one: its retention is what the
 * values chosen lose against the quantizer's own codes. */
int wmz_file_info(wmz_file f, char *buf, size_t cap, size_t *size);

/* wmz_file_verify decodes the whole file with every check. */
int wmz_file_verify(wmz_file f);

/* wmz_file_close closes the file, once the reads in flight have
 * returned, and releases the handle. */
int wmz_file_close(wmz_file f);

/* ---- Writers ---------------------------------------------------------- */

/* wmz_writer_create creates (or truncates) the file at path and returns a
 * writer of a new .wmz file in it, with codec c. Options: lambda (one
 * retention trade-off for every state), levels (an array of lambdas, null
 * for lossless, chosen by wmz_writer_level), distortion (the least
 * storage whose distortion against the lossless reconstruction is at
 * most this), source_distortion (the same against the float observations
 * written), keyframe (states a chunk, 1..4096, default 128), threads
 * (chunks encoded at once, default every core), embed_model (false).
 * None of lambda, levels, distortion, source_distortion: lossless. Invalid
 * options touch no file.
 *
 * With a codec that has a gate the lossy modes leave codes out. With one
 * that has none but a quantizer (a family, the default of
 * wmz_codec_train) they code by rate and distortion: every coordinate is
 * coded, with the values of least distortion + bits/lambda, by one member
 * of the bundle (the writer picks it; its model ID is the file's, and
 * readers given the bundle find it); the file's levels are not recorded.
 * A codec of codes only needs a gate for them. A lossless file of a
 * bundle is written by its finest member, whose codes wmz_writer_codes
 * takes. */
int wmz_writer_create(const char *path, wmz_codec c, const char *options, wmz_writer *out);

/* wmz_writer_begin starts an episode; meta (size bytes of JSON text, or
 * NULL) is kept with it. */
int wmz_writer_begin(wmz_writer w, const char *meta, size_t size);

/* wmz_writer_codes writes states states of codes (n = states*S*M) to the
 * episode; actions[t] leads into state t (the first of an episode is
 * ignored); actions NULL: -1 for each. Codes out of range write nothing. */
int wmz_writer_codes(wmz_writer w, const int64_t *actions, size_t states, const void *codes, size_t n, int width);

/* wmz_writer_obs quantizes and writes states states of float observations
 * (n = states*S*dim); actions as for wmz_writer_codes. Values that are not
 * finite write nothing. */
int wmz_writer_obs(wmz_writer w, const int64_t *actions, size_t states, const float *obs, size_t n);

/* wmz_writer_level sets the retention level (an index into the option
 * levels) of the states written next. */
int wmz_writer_level(wmz_writer w, int level);

/* wmz_writer_flush writes the completed chunks, so that a crash loses at
 * most the states after them (wmzip recover). */
int wmz_writer_flush(wmz_writer w);

/* wmz_writer_close completes the file (with a distortion target: searches
 * and writes it) and closes it. The handle stays valid for
 * wmz_writer_account until wmz_writer_free. Closing again returns what
 * the first close returned. */
int wmz_writer_close(wmz_writer w);

/* wmz_writer_abort closes the file without completing it and removes it;
 * it does nothing to a completed file. */
int wmz_writer_abort(wmz_writer w);

/* wmz_writer_account returns the writer's account of the states placed
 * so far (of the whole file after close) as a JSON object: states,
 * retained, wrong, distortion, lossless_chunks, bytes, report (as
 * wmz_file_info's distortion), quantizer_distortion, quantizer_vectors,
 * and search {lambda, lambdas, distortion, encodes} after a distortion
 * target's search (else null). Of a file coded by rate and distortion,
 * the search's lambda is null and lambdas empty (the coder's lambda is
 * not reported) and its distortion is the whole distance to the target's
 * reference, quantizer included; quantizer_distortion is the member's. */
int wmz_writer_account(wmz_writer w, char *buf, size_t cap, size_t *size);

/* wmz_writer_free releases the handle. A file neither closed nor aborted
 * is left as it stands: incomplete, as after a crash. */
int wmz_writer_free(wmz_writer w);

/* ---- Readers: in order ------------------------------------------------ */

/* wmz_reader_open opens the .wmz file at path to read in order, with
 * codec c or the embedded model (c = 0). Options: threads. */
int wmz_reader_open(const char *path, wmz_codec c, const char *options, wmz_reader *out);

/* wmz_reader_codec returns a new handle to the codec the file is read
 * with, as wmz_file_codec. */
int wmz_reader_codec(wmz_reader r, wmz_codec *out);

/* wmz_reader_next moves to the next episode; WMZ_EOF after the last. */
int wmz_reader_next(wmz_reader r);

/* wmz_reader_meta returns the current episode's metadata, as
 * wmz_file_meta. */
int wmz_reader_meta(wmz_reader r, char *buf, size_t cap, size_t *size);

/* wmz_reader_state decodes the episode's next state: its action and codes
 * (either may be NULL); WMZ_EOF at the episode's end. */
int wmz_reader_state(wmz_reader r, int64_t *action, void *codes, size_t cap, int width);

/* wmz_reader_obs decodes the episode's next state: its action (may be
 * NULL) and reconstructed slot vectors; WMZ_EOF at the episode's end. */
int wmz_reader_obs(wmz_reader r, int64_t *action, float *obs, size_t cap);

/* wmz_reader_level returns the retention level of the state read last:
 * an index into the file's levels, -1 for a chunk coded losslessly in a
 * file with levels, 0 in a file without (among them files coded by rate
 * and distortion, whose levels are not recorded). */
int wmz_reader_level(wmz_reader r, int *level);

/* wmz_reader_close closes the file and releases the handle. */
int wmz_reader_close(wmz_reader r);

/* ---- Searches: nearest neighbours ------------------------------------ */

/* A search finds the stored slot vectors or states nearest a query, by
 * asymmetric distance: the squared Euclidean distance between the query
 * (floats, or the reconstruction of codes) and the reconstruction of the
 * stored codes; a state's is summed over its S slots. Ranks are decided
 * in integers, ties broken by episode, step and slot, and are the same on
 * every machine: the results are `wmzip search --json`'s for the same
 * files, queries and options. Episodes are numbered across the files in
 * the order given, as `wmzip decode` numbers them. It needs a codec with
 * a quantizer of at most 256 centroids. */

/* wmz_search_open opens the n .wmz files paths[0..n-1] to be searched
 * together, with codec c, or with the model the first file embeds when c
 * is 0; every file must be written with that codec. When c is a bundle,
 * the search runs with the member that wrote the files (every file must
 * be that member's), which wmz_search_codec returns and whose shape the
 * queries have. Each file's index
 * (its .wmzi beside it, which `wmzip index` writes) is loaded when it is
 * current, and built from the file otherwise, which decodes it whole;
 * wmz_search_info tells which happened. Options: threads (goroutines that
 * build an index; default every core), save (true: write an index built
 * here beside its file, as `wmzip index` does; default false). */
int wmz_search_open(const char *const *paths, size_t n, wmz_codec c, const char *options, wmz_search *out);

/* wmz_search_codec returns a new handle to the codec the search runs with
 * (free it with wmz_codec_free): the one given, the member of a bundle
 * given that wrote the files, or the model the first file embeds. */
int wmz_search_codec(wmz_search s, wmz_codec *out);

/* wmz_search_info returns what the search holds as a JSON object:
 * episodes, states, model_id, and files: for each, path, episodes (the
 * number of states of each of its episodes), states, index ("loaded": the
 * index beside it was current; "built": decoded from the file for this
 * search), reason (why it was built: "no index", or what was wrong with
 * the one there), saved (a built index was written beside the file),
 * index_bytes and cells (of its coarse partition of states, 0: none). */
int wmz_search_info(wmz_search s, char *buf, size_t cap, size_t *size);

/* wmz_search_floats finds the k nearest neighbours (1 <= k <= 2^20) of
 * each query of n floats: slot queries of dim floats each (states 0), or
 * state queries of S*dim each (states 1: S slot vectors, distances summed
 * over slots). Values must be finite.
 *
 * Options: episodes and steps, each [first, end] (end 0: no bound): only
 * memory episodes first..end-1, and steps first..end-1 of each episode,
 * are searched; nprobe (state queries: scan only the nprobe cells of each
 * file's partition nearest the query; default 0, every state); threads
 * (default every core; the results do not depend on it).
 *
 * Results. Query i's neighbours go to entries i*k..i*k+k-1 of the
 * arrays, nearest first: the neighbour's episode (numbered across the
 * files), step, slot (-1 for a state query) and distance. Any of the four
 * arrays may be NULL (not wanted); each holds cap entries. A query that
 * finds fewer than k neighbours (the memory, or the part of it the
 * filters or nprobe leave, holds fewer) fills the rest of its entries
 * with episode, step and slot -1 and distance +infinity. *size receives
 * the number of entries needed, queries*k; when all four arrays are NULL
 * or cap is smaller, nothing is searched and the call returns
 * WMZ_ERR_BUFFER, so a caller can ask for the size first. */
int wmz_search_floats(wmz_search s, const float *queries, size_t n, int states, size_t k, const char *options,
                      int64_t *episode, int64_t *step, int64_t *slot, double *distance, size_t cap, size_t *size);

/* wmz_search_codes is wmz_search_floats of queries given as n codes of
 * width bytes: M for a slot query, S*M for a state query (a state's
 * codes, as wmz_file_state writes them); each query stands for its
 * reconstruction. Codes must be below the codec's alphabet. */
int wmz_search_codes(wmz_search s, const void *queries, size_t n, int width, int states, size_t k, const char *options,
                     int64_t *episode, int64_t *step, int64_t *slot, double *distance, size_t cap, size_t *size);

/* wmz_search_close closes the search, once the searches in flight have
 * returned, and releases the handle. */
int wmz_search_close(wmz_search s);

/* ---- Objects in a store and catalogs ---------------------------------- */

/* A path of the form s3://bucket/key names an object of the S3-compatible
 * store the standard AWS environment variables describe (AWS_ENDPOINT_URL,
 * AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION), wherever a path
 * is taken: wmz_file_open reads it by ranged GETs, wmz_search_open loads
 * its index object (key + "i") or builds one from it, wmz_writer_create
 * writes it by a multipart upload completed by wmz_writer_close (an
 * aborted or freed writer leaves no object). The JSON options of
 * wmz_file_open take "entry" and those of wmz_search_open "entries" (one
 * a path): a memory's entry of a catalog, as the manifest holds it
 * (docs/catalog.md), which spares requests and is checked against the
 * memory (a memory replaced since gives an error, never its bytes). */

/* wmz_catalog_update writes or refreshes the manifest of the .wmz
 * memories under root (an s3:// prefix or a folder), as `wmzip catalog`
 * does; it returns what it did as a JSON object: Kept, Refreshed, Added,
 * Dropped, Written, Requests. Options: parallel (memories read at once),
 * dry_run. */
int wmz_catalog_update(const char *root, const char *options, char *buf, size_t cap, size_t *size);

/* wmz_catalog_load reads the manifest of name (a root, or the manifest
 * itself) with one request and returns its JSON, its root where it was
 * found. */
int wmz_catalog_load(const char *name, char *buf, size_t cap, size_t *size);

#ifdef __cplusplus
}
#endif

#endif /* WMZIP_H */
