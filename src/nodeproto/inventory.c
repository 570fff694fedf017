/*
 * inventory.c - a node's inventory (PUT /v1/nodes/{name}) both ways, and
 * the core's node spec made from it.
 *
 * Rules read here: GPUs listed in index order 0..n-1 (NVML's order; the
 * core's GPU g is the node's GPU g; a UUID when NVML gave one: jobs are
 * told their GPUs by UUID, else by index); a GPU model when
 * there are GPUs; MIG instances only on GPUs in MIG mode; a gpu_topo of
 * the GPU count.  Whether the core can take the node (models, MIG rules)
 * is gf_ctl_node_add's to say.
 */
#include <stdio.h>
#include <string.h>

#include "nodeproto/nodeproto.h"
#include "nodeproto/read.h"
#include "util/fmt.h"
#include "util/mem.h"

/* {"k": "v"} into "k=v,k=v". */
static int read_labels(struct gf_np_rd *r, const struct gf_jv *obj, char *out,
		       size_t size)
{
	int rc;
	const struct gf_jv *v = gf__np_get(r, obj, "labels", false, &rc);
	if (v == NULL)
		return rc;
	if (gf_jv_type(v) != GF_JV_OBJ)
		return gf__np_bad(r, "labels",
				  "expected an object of label: value");
	rc = gf_jv_pairs(v, "=, ", out, size);
	if (rc == GF_EINVAL)
		return gf__np_bad(r, "labels",
				  "labels and values are strings "
				  "without '=', ',' or spaces");
	if (rc)
		return gf__np_bad(r, "labels", "longer than %zu bytes",
				  size - 1);
	return 0;
}

#define I struct gf_np_inventory
/* the inventory's members before "labels", and after it */
static const struct gf__np_field where_fields[] = {
	GF__NP_STR(I, "address", false, address),
	GF__NP_STR(I, "agent_url", false, agent_url),
	GF__NP_STR(I, "version", false, version),
	{ 0 },
};

static const struct gf__np_field size_fields[] = {
	GF__NP_STR(I, "block", false, block),
	GF__NP_INT(I, "cpu_milli", true, cpu_milli, 0, GF_JOB_CPU_MILLI_MAX),
	GF__NP_INT(I, "memory_mib", true, memory_mib, 0, GF_JOB_MEMORY_MIB_MAX),
	GF__NP_STR(I, "gpu_model", false, gpu_model),
	GF__NP_STR(I, "mig_model", false, mig_model),
	{ 0 },
};
#undef I

static const struct gf__np_field gpu_fields[] = {
	GF__NP_INT(struct gf_np_gpu, "index", true, index, 0,
		   GF_CNODE_MAX_GPUS - 1),
	GF__NP_STR(struct gf_np_gpu, "uuid", false, uuid),
	GF__NP_STR(struct gf_np_gpu, "name", false, name),
	GF__NP_INT(struct gf_np_gpu, "memory_mib", false, memory_mib, 0,
		   INT64_C(1) << 30),
	GF__NP_BOOL(struct gf_np_gpu, "mig_mode", false, mig_mode),
	GF__NP_BOOL(struct gf_np_gpu, "healthy", false, healthy),
	GF__NP_STR(struct gf_np_gpu, "reason", false, reason),
	{ 0 },
};

static const struct gf__np_field mig_fields[] = {
	GF__NP_INT(struct gf_np_mig, "gpu", true, gpu, 0,
		   GF_CNODE_MAX_GPUS - 1),
	GF__NP_STR(struct gf_np_mig, "profile", true, profile),
	GF__NP_INT(struct gf_np_mig, "start", true, start, 0, 7),
	GF__NP_STR(struct gf_np_mig, "uuid", false, uuid),
	{ 0 },
};

/* Element i of "gpus" of the inventory ctx. */
static int read_gpu_at(struct gf_np_rd *r, const struct gf_jv *g, size_t i,
		       void *ctx)
{
	struct gf_np_gpu *out = &((struct gf_np_inventory *)ctx)->gpus[i];
	int rc;
	memset(out, 0, sizeof(*out));
	out->healthy = true;
	if ((rc = gf__np_obj(r, g)) ||
	    (rc = gf__np_fields_read(r, g, gpu_fields, out)))
		return rc;
	if (out->index != (int)i)
		return gf__np_bad(r, "index",
				  "expected %d: GPUs are listed in index "
				  "order from 0",
				  (int)i);
	return 0;
}

/* Element i of "mig" of the inventory ctx (its GPUs read). */
static int read_mig_at(struct gf_np_rd *r, const struct gf_jv *m, size_t i,
		       void *ctx)
{
	struct gf_np_inventory *inv = ctx;
	struct gf_np_mig *out = &inv->mig[i];
	int rc;
	memset(out, 0, sizeof(*out));
	if ((rc = gf__np_obj(r, m)) ||
	    (rc = gf__np_fields_read(r, m, mig_fields, out)))
		return rc;
	if (out->gpu >= inv->ngpus)
		return gf__np_bad(r, "gpu", "the node has %d GPUs", inv->ngpus);
	if (!inv->gpus[out->gpu].mig_mode)
		return gf__np_bad(r, "gpu", "GPU %d is not in MIG mode",
				  out->gpu);
	return 0;
}

/* "gpu_topo": {"pair": [[q, ...], ...], "nic": [q, ...]}. */
static int read_topo(struct gf_np_rd *r, const struct gf_jv *obj,
		     struct gf_np_inventory *inv)
{
	int rc;
	const struct gf_jv *t = gf__np_get(r, obj, "gpu_topo", false, &rc);
	if (t == NULL)
		return rc;
	char saved[96];
	gf__np_push(r, "gpu_topo", saved, sizeof(saved));
	size_t n = (size_t)inv->ngpus;
	const struct gf_jv *pair = gf__np_arr(r, t, "pair", true, n, &rc);
	const struct gf_jv *nic =
		rc ? NULL : gf__np_arr(r, t, "nic", true, n, &rc);
	if (rc == 0 && (gf_jv_len(pair) != n || gf_jv_len(nic) != n))
		rc = gf__np_bad(r, "pair",
				"expected %zu rows and %zu NIC "
				"entries, one per GPU",
				n, n);
	memset(&inv->topo, 0, sizeof(inv->topo));
	inv->topo.ngpus = (uint8_t)n;
	for (size_t a = 0; rc == 0 && a < n; a++) {
		const struct gf_jv *row = gf_jv_at(pair, a);
		int64_t q;
		if (gf_jv_type(row) != GF_JV_ARR || gf_jv_len(row) != n) {
			rc = gf__np_bad(r, "pair",
					"row %zu: expected %zu "
					"qualities",
					a, n);
			break;
		}
		for (size_t b = 0; rc == 0 && b < n; b++) {
			if (!gf_jv_int(gf_jv_at(row, b), &q) || q < 0 ||
			    q > 255)
				rc = gf__np_bad(r, "pair",
						"[%zu][%zu]: expected 0 to 255",
						a, b);
			inv->topo.pair[a][b] = (uint8_t)q;
		}
		if (rc == 0 &&
		    (!gf_jv_int(gf_jv_at(nic, a), &q) || q < 0 || q > 255))
			rc = gf__np_bad(r, "nic", "[%zu]: expected 0 to 255",
					a);
		inv->topo.nic[a] = (uint8_t)q;
	}
	for (size_t a = 0; rc == 0 && a < n; a++)
		for (size_t b = 0; rc == 0 && b < n; b++)
			if (inv->topo.pair[a][b] != inv->topo.pair[b][a])
				rc = gf__np_bad(r, "pair",
						"not symmetric at [%zu][%zu]",
						a, b);
	if (rc == 0) {
		inv->has_topo = true;
		bool uniform = true;
		for (size_t a = 0; a < n; a++) {
			if (inv->topo.nic[a] != inv->topo.nic[0])
				uniform = false;
			for (size_t b = 0; b < n; b++)
				if (a != b && inv->topo.pair[a][b] !=
						      inv->topo.pair[0][n > 1])
					uniform = false;
		}
		inv->topo.uniform = uniform;
	}
	gf__np_leave(r, saved);
	return rc;
}

void gf_np_inventory_room(struct gf_np_inventory *inv, int ngpus, int nmig)
{
	gf_np_inventory_release(inv);
	if (ngpus > 0)
		inv->gpus = gf_calloc((size_t)ngpus, sizeof(*inv->gpus));
	if (nmig > 0)
		inv->mig = gf_calloc((size_t)nmig, sizeof(*inv->mig));
}

void gf_np_inventory_release(struct gf_np_inventory *inv)
{
	gf_free(inv->gpus);
	gf_free(inv->mig);
	inv->gpus = NULL;
	inv->mig = NULL;
	inv->ngpus = inv->nmig = 0;
}

void gf_np_inventory_free(struct gf_np_inventory *inv)
{
	if (inv == NULL)
		return;
	gf_np_inventory_release(inv);
	gf_free(inv);
}

/* "gpus", then "mig", each into an array of its length. */
static int read_gpus(struct gf_np_rd *r, const struct gf_jv *obj,
		     struct gf_np_inventory *inv)
{
	int rc;
	const struct gf_jv *a =
		gf__np_arr(r, obj, "gpus", false, GF_CNODE_MAX_GPUS, &rc);
	if (rc)
		return rc;
	gf_np_inventory_room(inv, a ? (int)gf_jv_len(a) : 0, 0);
	if (a &&
	    (rc = gf__np_walk(r, "gpus", a, read_gpu_at, inv, &inv->ngpus)))
		return rc;
	a = gf__np_arr(r, obj, "mig", false, GF_CTL_MAX_MIG, &rc);
	if (rc || !a || !gf_jv_len(a))
		return rc;
	inv->mig = gf_calloc(gf_jv_len(a), sizeof(*inv->mig));
	return gf__np_walk(r, "mig", a, read_mig_at, inv, &inv->nmig);
}

/* After address, agent_url, version: the rest of the inventory. */
static int read_rest(struct gf_np_rd *r, const struct gf_jv *v, void *out)
{
	struct gf_np_inventory *inv = out;
	int rc;
	if ((rc = read_labels(r, v, inv->labels, sizeof(inv->labels))) ||
	    (rc = gf__np_fields_read(r, v, size_fields, inv)) ||
	    (rc = read_gpus(r, v, inv)) || (rc = read_topo(r, v, inv)))
		return rc;
	if (inv->ngpus > 0 && !inv->gpu_model[0])
		return gf__np_bad(r, "gpu_model", "required with GPUs");
	const struct gf_jv *topo = gf_jv_get(v, "topology");
	if (topo && gf_jv_type(topo) != GF_JV_OBJ)
		return gf__np_bad(r, "topology",
				  "expected an object (topo --json)");
	return 0;
}

int gf_np_inventory_read(const struct gf_jv *v, struct gf_np_inventory *inv,
			 struct gf_err *e)
{
	int rc = gf__np_doc(v, inv, sizeof(*inv), where_fields, read_rest, e);
	if (rc)
		gf_np_inventory_release(inv);
	return rc;
}

static void write_topo(struct gf_json *j, const struct gf_gpu_topo *t)
{
	gf_json_obj_begin(j, "gpu_topo");
	gf_json_arr_begin(j, "pair");
	for (int a = 0; a < t->ngpus; a++) {
		gf_json_arr_begin(j, NULL);
		for (int b = 0; b < t->ngpus; b++)
			gf_json_int(j, NULL, t->pair[a][b]);
		gf_json_arr_end(j);
	}
	gf_json_arr_end(j);
	gf_json_arr_begin(j, "nic");
	for (int a = 0; a < t->ngpus; a++)
		gf_json_int(j, NULL, t->nic[a]);
	gf_json_arr_end(j);
	gf_json_obj_end(j);
}

void gf_np_inventory_write(struct gf_json *j, const struct gf_np_inventory *inv,
			   const char *topology, size_t topology_len)
{
	gf__np_fields_write(j, where_fields, inv);
	gf_json_kv(j, "labels", inv->labels);
	gf__np_fields_write(j, size_fields, inv);
	gf__np_list_write(j, "gpus", gpu_fields, inv->gpus,
			  sizeof(inv->gpus[0]), inv->ngpus);
	gf__np_list_write(j, "mig", mig_fields, inv->mig, sizeof(inv->mig[0]),
			  inv->nmig);
	if (inv->has_topo)
		write_topo(j, &inv->topo);
	if (topology && topology_len)
		gf_json_raw(j, "topology", topology, topology_len);
}

/* The value of label key in "k=v,k=v" into out ("" when absent). */
static void label_value(const char *labels, const char *key, char *out,
			size_t size)
{
	size_t klen = strlen(key);
	out[0] = '\0';
	for (const char *p = labels; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len > klen + 1 && !strncmp(p, key, klen) &&
		    p[klen] == '=') {
			size_t v = len - klen - 1;
			if (v < size) {
				memcpy(out, p + klen + 1, v);
				out[v] = '\0';
			}
			return;
		}
		p = end ? end + 1 : NULL;
	}
}

void gf_np_inventory_spec(const struct gf_np_inventory *inv,
			  struct gf_ctl_node_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->cpu_milli = inv->cpu_milli;
	spec->memory_mib = inv->memory_mib;
	spec->ngpus = inv->ngpus;
	gf_note(spec->gpu_model, sizeof(spec->gpu_model), "%s", inv->gpu_model);
	gf_note(spec->mig_model, sizeof(spec->mig_model), "%s", inv->mig_model);
	gf_note(spec->labels, sizeof(spec->labels), "%s", inv->labels);
	gf_note(spec->block, sizeof(spec->block), "%s", inv->block);
	if (!spec->block[0]) /* the label names it */
		label_value(inv->labels, GF_NP_BLOCK_LABEL, spec->block,
			    sizeof(spec->block));
	for (int i = 0; i < inv->nmig; i++) {
		struct gf_ctl_mig *m = &spec->mig[spec->nmig++];
		m->gpu = inv->mig[i].gpu;
		m->start = inv->mig[i].start;
		gf_note(m->profile, sizeof(m->profile), "%s",
			inv->mig[i].profile);
	}
	spec->topo = inv->has_topo ? &inv->topo : NULL;
}
