/*
 * store.c - the store's public face: the URL picks an engine (sqlite.c,
 * pg.c), the schema is migrated at open, jobs are checked on the way in
 * (before any SQL runs) and out (row_read.c), and every error is named
 * with the store's URL, password masked.
 *
 * Invariants: only a store that leads writes (s->leading, set by the
 * engine's lead and cleared by it or by a failed write); a load hands
 * over jobs only once every row parsed, so a corrupt row hands over
 * nothing; a public function prefixes the engine's message with the URL
 * exactly once.
 */
#include "store/store.h"

#include <stdio.h>
#include <string.h>

#include "store/store_impl.h"
#include "util/clock.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

int gf__store_err_prefix(const struct gf_store *s, struct gf_err *e)
{
	if (!e)
		return GF_ECONFLICT;
	char tmp[GF_ERR_MSG_MAX];
	gf_note(tmp, sizeof(tmp), "%s", e->msg);
	int n = snprintf(e->msg, sizeof(e->msg), "'%s': %s", s->url, tmp);
	if (n >= (int)sizeof(e->msg)) /* a long URL: the cause stays whole */
		gf_note(e->msg, sizeof(e->msg), "'%.64s...': %.430s", s->url,
			tmp);
	return e->code;
}

/* Copy a URL, its password (user:PASS@ or password=PASS) as "***". */
static void mask_url(const char *url, char *out, size_t size)
{
	struct gf_buf b;
	gf_buf_init(&b, size - 1);
	const char *auth = strstr(url, "://");
	const char *at = NULL, *colon = NULL;
	if (auth) {
		auth += 3;
		size_t alen = strcspn(auth, "/?#");
		for (const char *p = auth; p < auth + alen; p++)
			if (*p == '@')
				at = p;
		if (at)
			colon = memchr(auth, ':', (size_t)(at - auth));
	}
	for (const char *p = url; *p;) {
		if (colon && p == colon + 1) {
			gf_buf_puts(&b, "***");
			p = at;
			continue;
		}
		if (strncmp(p, "password=", 9) == 0 &&
		    (p == url || p[-1] == '?' || p[-1] == '&')) {
			gf_buf_puts(&b, "password=***");
			p += 9 + strcspn(p + 9, "&#");
			continue;
		}
		gf_buf_putc(&b, *p++);
	}
	gf_note(out, size, "%s",
		gf_buf_error(&b) ? "(URL too long)" : gf_buf_str(&b));
	gf_buf_release(&b);
}

static bool has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

int gf_store_open(const char *url, struct gf_store **out, struct gf_err *e)
{
	struct gf_store *s;
	const char *key_type = "BIGINT";
	int rc;
	*out = NULL;
	if (strnlen(url, GF_STORE_URL_MAX) >= GF_STORE_URL_MAX)
		return gf_err_set(e, GF_ETOOBIG, "store URL: over %d bytes",
				  GF_STORE_URL_MAX - 1);
	s = gf_calloc(1, sizeof(*s));
	mask_url(url, s->url, sizeof(s->url));
	double t0 = gf_clock_ms();
	if (has_prefix(url, "sqlite:")) {
		s->kind = GF_STORE_SQLITE;
		key_type = "INTEGER";
		rc = gf__store_sqlite_open(s, url + 7, e);
	} else if (has_prefix(url, "postgres://") ||
		   has_prefix(url, "postgresql://")) {
		s->kind = GF_STORE_POSTGRES;
		key_type = "BIGINT";
		rc = gf__store_pg_open(s, url, e);
	} else {
		rc = gf_err_set(e, GF_EINVAL,
				"expected sqlite:PATH or postgres://...");
	}
	if (rc) {
		gf__store_err_prefix(s, e);
		gf_free(s);
		return rc;
	}
	if ((rc = gf__store_migrate(s, key_type, e))) {
		gf__store_err_prefix(s, e);
		gf_store_close(s);
		return rc;
	}
	gf_log(GF_LOG_DEBUG, "store", "opened %s in %.1f ms", s->url,
	       gf_clock_ms() - t0);
	*out = s;
	return 0;
}

void gf_store_close(struct gf_store *s)
{
	if (!s)
		return;
	if (s->ops)
		s->ops->close(s);
	gf__free(s);
}

enum gf_store_kind gf_store_kind(const struct gf_store *s)
{
	return s->kind;
}

const char *gf_store_url(const struct gf_store *s)
{
	return s->url;
}

bool gf_store_is_leading(const struct gf_store *s)
{
	return s->leading;
}

/* --- loading --------------------------------------------------------- */

struct loaded {
	struct gf_job **v;
	size_t n, cap;
	struct gf_err *e;
};

static int take_row(const struct gf__cell *cells, void *arg)
{
	struct loaded *l = arg;
	struct gf_job *j;
	int rc = gf__store_row_job(cells, &j, l->e);
	if (rc)
		return rc;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->v = gf_reallocarray(l->v, l->cap, sizeof(*l->v));
	}
	l->v[l->n++] = j;
	return 0;
}

static void free_jobs(struct gf_job **v, size_t from, size_t n)
{
	for (size_t i = from; i < n; i++) {
		gf_job_release(v[i]);
		gf_free(v[i]);
	}
}

int gf_store_load_jobs(struct gf_store *s,
		       int (*fn)(struct gf_job *job, void *arg), void *arg,
		       struct gf_err *e)
{
	struct loaded l = { .e = e };
	double t0 = gf_clock_ms();
	int rc = s->ops->select(s, gf__store_sql_select(), GF__NCOLS, take_row,
				&l, e);
	if (rc) {
		free_jobs(l.v, 0, l.n);
		gf_free(l.v);
		return gf__store_err_prefix(s, e);
	}
	gf_log(GF_LOG_DEBUG, "store", "loaded %zu jobs in %.1f ms", l.n,
	       gf_clock_ms() - t0);
	for (size_t i = 0; i < l.n; i++) {
		if ((rc = fn(l.v[i], arg)) != 0) {
			free_jobs(l.v, i + 1, l.n);
			break;
		}
	}
	gf_free(l.v);
	return rc;
}

int gf_store_max_seq(struct gf_store *s, uint64_t *out, struct gf_err *e)
{
	int64_t v;
	int rc = s->ops->query_i64(s, "SELECT MAX(seq) FROM jobs", 0, &v, e);
	if (rc)
		return gf__store_err_prefix(s, e);
	if (v < 0) {
		gf_err_set(e, GF_EPARSE, "jobs: a negative seq (%lld)",
			   (long long)v);
		return gf__store_err_prefix(s, e);
	}
	*out = (uint64_t)v;
	return 0;
}

/* --- writing and leading --------------------------------------------- */

int gf_store_write(struct gf_store *s, const struct gf_job *const *jobs, int n,
		   struct gf_err *e)
{
	if (n < 1) {
		gf_err_set(e, GF_EINVAL, "write: %d jobs, expected 1 to %d", n,
			   GF_STORE_BATCH_MAX);
		return gf__store_err_prefix(s, e);
	}
	const struct gf_store_batch b = { .jobs = jobs, .n = n };
	return gf_store_commit(s, &b, e);
}

int gf_store_commit(struct gf_store *s, const struct gf_store_batch *b,
		    struct gf_err *e)
{
	int rc;
	if (b->n < 0 || b->n > GF_STORE_BATCH_MAX || b->nruns < 0 ||
	    b->nruns > GF_STORE_BATCH_MAX || b->n + b->nruns < 1) {
		gf_err_set(e, GF_EINVAL,
			   "write: %d jobs and %d runs, expected 0 to %d of "
			   "each and one at least",
			   b->n, b->nruns, GF_STORE_BATCH_MAX);
		return gf__store_err_prefix(s, e);
	}
	if (!s->leading) {
		gf_err_set(e, GF_ECONFLICT,
			   "write refused: this server does not hold the "
			   "leader lock");
		return gf__store_err_prefix(s, e);
	}
	for (int i = 0; i < b->n; i++)
		if ((rc = gf__store_job_check(b->jobs[i], e)))
			return gf__store_err_prefix(s, e);
	for (int i = 0; i < b->nruns; i++)
		if ((rc = gf__store_run_check(&b->runs[i], e)))
			return gf__store_err_prefix(s, e);
	double t0 = gf_clock_ms();
	if ((rc = s->ops->write(s, b, e)))
		return gf__store_err_prefix(s, e);
	gf_log(GF_LOG_DEBUG, "store", "wrote %d jobs and %d runs in %.2f ms",
	       b->n, b->nruns, gf_clock_ms() - t0);
	return 0;
}

int gf_store_lead(struct gf_store *s, bool *leading, struct gf_err *e)
{
	bool was = s->leading;
	int rc = s->ops->lead(s, leading, e);
	if (rc) {
		*leading = false;
		s->leading = false;
		gf__store_err_prefix(s, e);
	}
	if (was != *leading)
		gf_log(GF_LOG_INFO, "store", "%s: %s", s->url,
		       *leading ? "leading" : "no longer leading");
	return rc;
}
