/*
 * embed.c -- host-side build tool: turns the web UI's source files
 * (src/ui/) into one C file holding a table of {name, mime, etag, bytes}
 * that src/http/ui.c serves.  The sources stay readable text in git; only
 * the generated file (in the build directory) holds byte arrays.
 *
 *   embed OUT.c FILE...
 *
 * An asset's name is its file name without directories (so it is served at
 * /ui/NAME); two inputs with the same name are an error.  The ETag is the
 * FNV-1a 64-bit hash of the bytes, so it changes exactly when they do.
 * Each file is also compressed here, once, with brotli (quality 11) and
 * with gzip (zlib, level 9), so that the server sends a browser a third or
 * less of the bytes without compressing anything itself; a form's ETag is
 * the plain one with "-br" or "-gz".  A form that would be no smaller than
 * the file is left out.  C11, stdio, zlib and libbrotlienc: it runs on the
 * build machine before anything else is built.
 *
 *   embed --plain OUT.c FILE...
 *
 * writes the files as they are, with no type, ETag or compressed form, into the
 * table of src/util/embedded.h (the operations' declarations, src/ops/decl/).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <brotli/encode.h>
#include <zlib.h>

struct kind {
	const char *ext;
	const char *mime;
};

static const struct kind kinds[] = {
	{ ".html", "text/html; charset=utf-8" },
	{ ".css", "text/css; charset=utf-8" },
	{ ".js", "text/javascript; charset=utf-8" },
	{ ".mjs", "text/javascript; charset=utf-8" },
	{ ".svg", "image/svg+xml" },
	{ ".json", "application/json" },
};

static const char *mime_of(const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t e = strlen(kinds[i].ext);

		if (n > e && !strcmp(name + n - e, kinds[i].ext))
			return kinds[i].mime;
	}
	return NULL;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Reads a whole file; caller free()s.  NULL on failure. */
static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *data = NULL;
	size_t cap = 0, n = 0, k;

	if (!f)
		return NULL;
	do {
		if (n == cap) {
			unsigned char *more;

			cap = cap ? cap * 2 : 65536;
			more = realloc(data, cap);
			if (!more) {
				free(data);
				fclose(f);
				return NULL;
			}
			data = more;
		}
		k = fread(data + n, 1, cap - n, f);
		n += k;
	} while (k);
	if (ferror(f)) {
		free(data);
		data = NULL;
	}
	fclose(f);
	*len = n;
	return data;
}

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/*
 * The gzip form of n bytes at p, in a new buffer the caller free()s, its
 * length in *gz_len; NULL when it would be no smaller, or on failure
 * (*failed set).
 */
static unsigned char *gzip_bytes(const unsigned char *p, size_t n, size_t *gz_len, int *failed)
{
	z_stream z = { 0 };
	unsigned char *out;
	uLong cap;
	int rc;

	/* windowBits 15 + 16: a gzip header and trailer, which every browser takes */
	if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK) {
		*failed = 1;
		return NULL;
	}
	cap = deflateBound(&z, (uLong)n);
	out = malloc(cap);
	z.next_in = (unsigned char *)p;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	rc = out ? deflate(&z, Z_FINISH) : Z_MEM_ERROR;
	*gz_len = z.total_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END)
		*failed = 1;
	if (rc != Z_STREAM_END || *gz_len >= n) {
		free(out);
		return NULL;
	}
	return out;
}

/* The brotli form of n bytes at p, as gzip_bytes gives the gzip one. */
static unsigned char *brotli_bytes(const unsigned char *p, size_t n, size_t *br_len, int *failed)
{
	size_t cap = BrotliEncoderMaxCompressedSize(n);
	unsigned char *out = cap ? malloc(cap) : NULL;

	*br_len = cap;
	if (!out || !BrotliEncoderCompress(BROTLI_MAX_QUALITY, BROTLI_DEFAULT_WINDOW,
					   BROTLI_MODE_TEXT, n, p, br_len, out)) {
		*failed = 1;
		free(out);
		return NULL;
	}
	if (*br_len >= n) {
		free(out);
		return NULL;
	}
	return out;
}

/* The compressed forms, in the order the server prefers them. */
static const struct form {
	const char *coding;     /* its Content-Encoding */
	const char *tag;        /* its ETag's suffix and its array's prefix */
	unsigned char *(*encode)(const unsigned char *p, size_t n, size_t *len, int *failed);
} forms[] = {
	{ "br", "br", brotli_bytes },
	{ "gzip", "gz", gzip_bytes },
};

#define N_FORMS (sizeof(forms) / sizeof(forms[0]))

static void emit_bytes(FILE *out, const char *prefix, int i, const unsigned char *p, size_t n)
{
	fprintf(out, "static const unsigned char %s%d[] = {", prefix, i);
	for (size_t k = 0; k < n; k++)
		fprintf(out, "%s%u,", k % 20 ? "" : "\n", p[k]);
	fprintf(out, "0\n};\n");
}

static int fail(const char *what, const char *path)
{
	fprintf(stderr, "embed: %s '%s'\n", what, path);
	return 1;
}

/* Writes asset i's plain bytes and each compressed form; has[i*N_FORMS+f] says which exist. */
static int emit_asset(FILE *out, int i, const char *path, uint64_t *etag, int *has)
{
	size_t n = 0;
	unsigned char *data = slurp(path, &n);

	if (!data)
		return fail("cannot read", path);
	*etag = fnv1a(data, n);
	emit_bytes(out, "asset", i, data, n);
	for (size_t f = 0; f < N_FORMS; f++) {
		size_t len = 0;
		int failed = 0;
		unsigned char *z = forms[f].encode(data, n, &len, &failed);

		if (failed) {
			free(data);
			return fail("cannot compress", path);
		}
		if (z) {
			emit_bytes(out, forms[f].tag, i, z, len);
			has[f] = 1;
			free(z);
		}
	}
	free(data);
	return 0;
}

static void emit_entry(FILE *out, int i, const char *path, uint64_t etag, const int *has)
{
	fprintf(out, "\t{ \"%s\", \"%s\", \"\\\"%016llx\\\"\", asset%d, sizeof(asset%d) - 1, {",
		base_name(path), mime_of(path), (unsigned long long)etag, i, i);
	for (size_t f = 0; f < N_FORMS; f++) {
		if (has[f])
			fprintf(out, " { \"%s\", %s%d, sizeof(%s%d) - 1, \"\\\"%016llx-%s\\\"\" },",
				forms[f].coding, forms[f].tag, i, forms[f].tag, i,
				(unsigned long long)etag, forms[f].tag);
		else
			fprintf(out, " { NULL, NULL, 0, NULL },");
	}
	fprintf(out, " } },\n");
}

/* The --plain table: {name, bytes, length} per file. */
static int plain(int argc, char **argv)
{
	FILE *out = fopen(argv[2], "w");

	if (!out)
		return fail("cannot write", argv[2]);
	fprintf(out, "/* Generated by tools/embed.c; do not edit. */\n"
		     "#include \"util/embedded.h\"\n\n");
	for (int i = 3; i < argc; i++) {
		size_t n = 0;
		unsigned char *data = slurp(argv[i], &n);

		if (!data)
			return fail("cannot read", argv[i]);
		emit_bytes(out, "file", i, data, n);
		free(data);
	}
	fprintf(out, "\nconst struct embedded_file embedded_files[] = {\n");
	for (int i = 3; i < argc; i++)
		fprintf(out, "\t{ \"%s\", (const char *)file%d, sizeof(file%d) - 1 },\n",
			base_name(argv[i]), i, i);
	fprintf(out, "\t{ NULL, NULL, 0 },\n};\n");
	if (fclose(out))
		return fail("cannot write", argv[2]);
	return 0;
}

int main(int argc, char **argv)
{
	FILE *out;
	uint64_t *etags;
	int *has;

	if (argc < 3) {
		fprintf(stderr, "usage: embed [--plain] OUT.c FILE...\n");
		return 2;
	}
	if (!strcmp(argv[1], "--plain"))
		return argc < 4 ? fail("no files for", argv[1]) : plain(argc, argv);
	for (int i = 2; i < argc; i++) {
		if (!mime_of(argv[i]))
			return fail("no content type known for", argv[i]);
		for (int j = 2; j < i; j++)
			if (!strcmp(base_name(argv[i]), base_name(argv[j])))
				return fail("two assets are named", base_name(argv[i]));
	}
	out = fopen(argv[1], "w");
	etags = calloc((size_t)argc, sizeof(*etags));
	has = calloc((size_t)argc * N_FORMS, sizeof(*has));
	if (!out || !etags || !has)
		return fail("cannot write", argv[1]);
	fprintf(out, "/* Generated by tools/embed.c from src/ui/; do not edit. */\n"
		     "#include \"http/ui_assets.h\"\n\n");
	for (int i = 2; i < argc; i++)
		if (emit_asset(out, i, argv[i], &etags[i], &has[(size_t)i * N_FORMS]))
			return 1;
	fprintf(out, "\nconst struct ui_asset ui_assets[] = {\n");
	for (int i = 2; i < argc; i++)
		emit_entry(out, i, argv[i], etags[i], &has[(size_t)i * N_FORMS]);
	fprintf(out, "\t{ NULL, NULL, NULL, NULL, 0, { { NULL, NULL, 0, NULL } } },\n};\n");
	free(etags);
	free(has);
	if (fclose(out))
		return fail("cannot write", argv[1]);
	return 0;
}
