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
	size_t nlen = strnlen(name, GF_STORE_NODE_NAME_MAX);
	/* the document's errors first, as gf__store_put_doc says them */
	if (gf__store_check_doc(name, nlen, spec, len, e))
		return gf__store_err_prefix(s, e);
	if (replicas < 0 || replicas > GF_STORE_SERVICE_MAX) {
		gf_err_set(e, GF_EINVAL, "service '%s': %d replicas (0 to %d)",
			   name, replicas, GF_STORE_SERVICE_MAX);
		return gf__store_err_prefix(s, e);
	}
	const int64_t v[2] = { replicas, now_ms };
	return gf__store_put_doc(
		s,
		"INSERT INTO services (name, spec, replicas, updated_ms) "
		"VALUES ($1, $2, $3, $4) ON CONFLICT (name) DO UPDATE SET "
		"spec = excluded.spec, replicas = excluded.replicas, "
		"updated_ms = excluded.updated_ms",
		name, spec, len, v, 2, e);
}

int gf_store_delete_service(struct gf_store *s, const char *name,
			    struct gf_err *e)
{
	return gf__store_delete_doc(s, "DELETE FROM services WHERE name = $1",
				    name, e);
}

struct svc_fn {
	int (*fn)(const char *name, const char *spec, size_t len, int replicas,
		  void *arg);
	void *arg;
};

static int take_service(const char *name, const char *spec, size_t len,
			int64_t replicas, void *arg)
{
	const struct svc_fn *f = arg;
	return f->fn(name, spec, len, (int)replicas, f->arg);
}

int gf_store_load_services(struct gf_store *s,
			   int (*fn)(const char *name, const char *spec,
				     size_t len, int replicas, void *arg),
			   void *arg, struct gf_err *e)
{
	struct svc_fn f = { fn, arg };
	return gf__store_load_docs(s, GF__DOC_SERVICES, take_service, &f, e);
}
