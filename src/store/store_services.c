/*
 * store_services.c - the services table: each inference service the
 * controller keeps a count of replicas for (docs/cluster.md), by name,
 * with its job spec as the API's JSON text (not parsed here) and the
 * count.
 *
 * Invariants: as store_nodes.c: only the leader writes; names and specs
 * obey gf__store_check_doc both ways; replicas is
 * 0..GF_STORE_SERVICE_MAX; a load hands over services only once every
 * row passed.
 */
#include <stdio.h>
#include <string.h>

#include "store/store_impl.h"
#include "util/fmt.h"
#include "util/mem.h"

int gf_store_put_service(struct gf_store *s, const char *name, const char *spec,
			 size_t len, int replicas, int64_t now_ms,
			 struct gf_err *e)
{
	int rc;
	size_t nlen = strnlen(name, GF_STORE_NODE_NAME_MAX);
	if ((rc = gf__store_check_doc(name, nlen, spec, len, e)))
		return gf__store_err_prefix(s, e);
	if (replicas < 0 || replicas > GF_STORE_SERVICE_MAX) {
		gf_err_set(e, GF_EINVAL, "service '%s': %d replicas (0 to %d)",
			   name, replicas, GF_STORE_SERVICE_MAX);
		return gf__store_err_prefix(s, e);
	}
	if ((rc = gf__store_leader_only(s, e)))
		return rc;
	const struct gf__param p[4] = {
		{ .kind = GF__P_TEXT, .s = name, .len = nlen },
		{ .kind = GF__P_TEXT, .s = spec, .len = len },
		{ .kind = GF__P_INT, .i = replicas },
		{ .kind = GF__P_INT, .i = now_ms },
	};
	rc = s->ops->exec_params(
		s,
		"INSERT INTO services (name, spec, replicas, updated_ms) "
		"VALUES ($1, $2, $3, $4) ON CONFLICT (name) DO UPDATE SET "
		"spec = excluded.spec, replicas = excluded.replicas, "
		"updated_ms = excluded.updated_ms",
		4, p, e);
	return rc ? gf__store_err_prefix(s, e) : 0;
}

int gf_store_delete_service(struct gf_store *s, const char *name,
			    struct gf_err *e)
{
	int rc;
	if ((rc = gf__store_leader_only(s, e)))
		return rc;
	const struct gf__param p[1] = {
		{ .kind = GF__P_TEXT, .s = name, .len = strlen(name) },
	};
	rc = s->ops->exec_params(s, "DELETE FROM services WHERE name = $1", 1,
				 p, e);
	return rc ? gf__store_err_prefix(s, e) : 0;
}

struct svc_row {
	char *name, *spec;
	size_t len;
	int replicas;
};

struct svc_rows {
	struct svc_row *v;
	size_t n, cap;
	struct gf_err *e;
};

static int take_service(const struct gf__cell *c, void *arg)
{
	struct svc_rows *l = arg;
	int64_t replicas;
	char name[GF_STORE_NODE_NAME_MAX];
	size_t nlen = c[0].p ? c[0].len : 0;
	gf_note(name, sizeof(name), "%.*s",
		(int)(nlen < sizeof(name) ? nlen : sizeof(name) - 1),
		c[0].p ? c[0].p : "");
	if (!c[0].p || !c[1].p || !gf__store_cell_i64(&c[2], &replicas) ||
	    replicas < 0 || replicas > GF_STORE_SERVICE_MAX)
		return gf_err_set(l->e, GF_EPARSE,
				  "services: service '%s': a NULL or a count "
				  "out of range",
				  name);
	if (gf__store_check_doc(c[0].p, c[0].len, c[1].p, c[1].len, l->e) ||
	    memchr(c[0].p, '\0', c[0].len)) {
		if (l->e) {
			char tmp[GF_ERR_MSG_MAX];
			gf_note(tmp, sizeof(tmp), "%s", l->e->msg);
			gf_err_set(l->e, GF_EPARSE, "services: %s", tmp);
		}
		return GF_EPARSE;
	}
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->v = gf_reallocarray(l->v, l->cap, sizeof(*l->v));
	}
	struct svc_row *r = &l->v[l->n++];
	r->name = gf_strndup(c[0].p, c[0].len);
	r->spec = gf_strndup(c[1].p, c[1].len);
	r->len = c[1].len;
	r->replicas = (int)replicas;
	return 0;
}

int gf_store_load_services(struct gf_store *s,
			   int (*fn)(const char *name, const char *spec,
				     size_t len, int replicas, void *arg),
			   void *arg, struct gf_err *e)
{
	struct svc_rows l = { .e = e };
	int rc = s->ops->select(s,
				"SELECT name, spec, replicas FROM services "
				"ORDER BY name",
				3, take_service, &l, e);
	if (rc)
		gf__store_err_prefix(s, e);
	for (size_t i = 0; i < l.n; i++) {
		if (rc == 0)
			rc = fn(l.v[i].name, l.v[i].spec, l.v[i].len,
				l.v[i].replicas, arg);
		gf_free(l.v[i].name);
		gf_free(l.v[i].spec);
	}
	gf_free(l.v);
	return rc;
}
