// Package objstore reads and writes .wmz files and .wmm models in an
// S3-compatible object store.
//
// A .wmz file suits an object store as it is: its index sits at the end
// and its chunks decode independently, so a reader needs the header, the
// index and the chunks it decodes, each one ranged GET (SPEC.md 6.1, 6.7).
//
//   - Store.Open returns an Object, an io.ReaderAt over one object for
//     wmzip.NewFile: opening costs two requests sent together (the head of
//     the object, and its tail with the trailer and index), a random read
//     one request for its chunk record, with a read-ahead of at most the
//     bytes asked for. Reads that follow one another grow the read-ahead,
//     fetched in the background, up to ReadOptions.MaxWindow. What was
//     fetched is kept up to ReadOptions.CacheBytes. Object.Stats counts the
//     requests and bytes.
//   - Store.OpenFile opens a .wmz for random access; Store.NewReader streams
//     it in order with one GET (resumed where it broke if a transfer
//     fails); Store.LoadCodec loads a model.
//   - Store.Create returns an Upload, the io.Writer a wmzip.Writer writes
//     to: parts of Options.PartSize go up as a multipart upload while the
//     file is written, so memory stays bounded whatever its size, and the
//     object appears only when Close completes the upload. An upload that
//     fails is aborted; one whose process dies leaves only an incomplete
//     multipart upload, which no listing or GET shows as an object
//     (Store.AbortUploads removes such leftovers).
//   - Store.List reads the summary of every .wmz under a prefix from its
//     header and index, two ranged GETs each.
//
// Every range request after the first names the ETag the object had when
// it was opened (If-Match), so a file replaced while it is read gives an
// error (ErrChanged), never a mix of two files. Requests that fail are
// sent again (Options.Retries, with a growing pause): every request here
// is a GET of fixed bytes, a part of an upload, or a listing, which are
// safe to repeat. Errors name the object as s3://bucket/key and wrap
// fs.ErrNotExist for a missing bucket or key and fs.ErrPermission for
// credentials the store refuses.
//
// Where the store is and who asks come from Options, or else from the
// standard AWS environment variables: AWS_ENDPOINT_URL_S3 or
// AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN, and AWS_REGION or AWS_DEFAULT_REGION.
//
// The codec (package wmzip and what it imports) knows nothing of this
// package; measurements are in docs/results-objstore.md.
package objstore
