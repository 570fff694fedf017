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

static int read_gpu(struct gf_np_rd *r, const struct gf_jv *g, int i,
		    struct gf_np_gpu *out)
{
	int rc;
	memset(out, 0, sizeof(*out));
	out->healthy = true;
	if (gf_jv_type(g) != GF_JV_OBJ)
		return gf__np_bad(r, "", "expected an object");
	if ((rc = gf__np_int32(r, g, "index", true, 0, GF_CNODE_MAX_GPUS - 1,
			       &out->index)) ||
	    (rc = gf__np_str(r, g, "uuid", false, out->uuid,
			     sizeof(out->uuid))) ||
	    (rc = gf__np_str(r, g, "name", false, out->name,
			     sizeof(out->name))) ||
	    (rc = gf__np_int(r, g, "memory_mib", false, 0, INT64_C(1) << 30,
			     &out->memory_mib)) ||
	    (rc = gf__np_bool(r, g, "mig_mode", false, &out->mig_mode)) ||
	    (rc = gf__np_bool(r, g, "healthy", false, &out->healthy)) ||
	    (rc = gf__np_str(r, g, "reason", false, out->reason,
			     sizeof(out->reason))))
		return rc;
	if (out->index != i)
		return gf__np_bad(r, "index",
				  "expected %d: GPUs are listed in index "
				  "order from 0",
				  i);
	return 0;
}

static int read_mig(struct gf_np_rd *r, const struct gf_jv *m,
		    const struct gf_np_inventory *inv, struct gf_np_mig *out)
{
	int rc;
	memset(out, 0, sizeof(*out));
	if (gf_jv_type(m) != GF_JV_OBJ)
		return gf__np_bad(r, "", "expected an object");
	if ((rc = gf__np_int32(r, m, "gpu", true, 0, GF_CNODE_MAX_GPUS - 1,
			       &out->gpu)) ||
	    (rc = gf__np_str(r, m, "profile", true, out->profile,
			     sizeof(out->profile))) ||
	    (rc = gf__np_int32(r, m, "start", true, 0, 7, &out->start)) ||
	    (rc = gf__np_str(r, m, "uuid", false, out->uuid,
			     sizeof(out->uuid))))
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

static int read_gpus(struct gf_np_rd *r, const struct gf_jv *obj,
		     struct gf_np_inventory *inv)
{
	int rc;
	const struct gf_jv *gpus =
		gf__np_arr(r, obj, "gpus", false, GF_CNODE_MAX_GPUS, &rc);
	char saved[96];
	for (size_t i = 0; rc == 0 && i < gf_jv_len(gpus); i++) {
		gf__np_enter(r, "gpus", i, saved, sizeof(saved));
		rc = read_gpu(r, gf_jv_at(gpus, i), (int)i, &inv->gpus[i]);
		gf__np_leave(r, saved);
		inv->ngpus = (int)i + 1;
	}
	if (rc)
		return rc;
	const struct gf_jv *mig =
		gf__np_arr(r, obj, "mig", false, GF_CTL_MAX_MIG, &rc);
	for (size_t i = 0; rc == 0 && i < gf_jv_len(mig); i++) {
		gf__np_enter(r, "mig", i, saved, sizeof(saved));
		rc = read_mig(r, gf_jv_at(mig, i), inv, &inv->mig[i]);
		gf__np_leave(r, saved);
		inv->nmig = (int)i + 1;
	}
	return rc;
}

int gf_np_inventory_read(const struct gf_jv *v, struct gf_np_inventory *inv,
			 struct gf_err *e)
{
	struct gf_np_rd r = { .e = e };
	int64_t cpu = 0;
	int rc;
	memset(inv, 0, sizeof(*inv));
	if (gf_jv_type(v) != GF_JV_OBJ)
		return gf_err_set(e, GF_EINVAL, "expected a JSON object");
	if ((rc = gf__np_str(&r, v, "address", false, inv->address,
			     sizeof(inv->address))) ||
	    (rc = gf__np_str(&r, v, "agent_url", false, inv->agent_url,
			     sizeof(inv->agent_url))) ||
	    (rc = gf__np_str(&r, v, "version", false, inv->version,
			     sizeof(inv->version))) ||
	    (rc = read_labels(&r, v, inv->labels, sizeof(inv->labels))) ||
	    (rc = gf__np_str(&r, v, "block", false, inv->block,
			     sizeof(inv->block))) ||
	    (rc = gf__np_int(&r, v, "cpu_milli", true, 0, GF_JOB_CPU_MILLI_MAX,
			     &cpu)) ||
	    (rc = gf__np_int(&r, v, "memory_mib", true, 0,
			     GF_JOB_MEMORY_MIB_MAX, &inv->memory_mib)) ||
	    (rc = gf__np_str(&r, v, "gpu_model", false, inv->gpu_model,
			     sizeof(inv->gpu_model))) ||
	    (rc = gf__np_str(&r, v, "mig_model", false, inv->mig_model,
			     sizeof(inv->mig_model))) ||
	    (rc = read_gpus(&r, v, inv)) || (rc = read_topo(&r, v, inv)))
		return rc;
	inv->cpu_milli = (int32_t)cpu;
	if (inv->ngpus > 0 && !inv->gpu_model[0])
		return gf__np_bad(&r, "gpu_model", "required with GPUs");
	const struct gf_jv *topo = gf_jv_get(v, "topology");
	if (topo && gf_jv_type(topo) != GF_JV_OBJ)
		return gf__np_bad(&r, "topology",
				  "expected an object (topo --json)");
	return 0;
}

static void write_labels(struct gf_json *j, const char *labels)
{
	char l[GF_CTL_LABELS_MAX], *save = NULL;
	gf_note(l, sizeof(l), "%s", labels);
	gf_json_obj_begin(j, "labels");
	for (char *kv = strtok_r(l, ",", &save); kv;
	     kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		if (eq) {
			*eq = '\0';
			gf_json_str(j, kv, eq + 1);
		}
	}
	gf_json_obj_end(j);
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
	gf_json_str(j, "address", inv->address);
	gf_json_str(j, "agent_url", inv->agent_url);
	gf_json_str(j, "version", inv->version);
	write_labels(j, inv->labels);
	gf_json_str(j, "block", inv->block);
	gf_json_int(j, "cpu_milli", inv->cpu_milli);
	gf_json_int(j, "memory_mib", inv->memory_mib);
	gf_json_str(j, "gpu_model", inv->gpu_model);
	gf_json_str(j, "mig_model", inv->mig_model);
	gf_json_arr_begin(j, "gpus");
	for (int i = 0; i < inv->ngpus; i++) {
		const struct gf_np_gpu *g = &inv->gpus[i];
		gf_json_obj_begin(j, NULL);
		gf_json_int(j, "index", g->index);
		gf_json_str(j, "uuid", g->uuid);
		gf_json_str(j, "name", g->name);
		gf_json_int(j, "memory_mib", g->memory_mib);
		gf_json_bool(j, "mig_mode", g->mig_mode);
		gf_json_bool(j, "healthy", g->healthy);
		gf_json_str(j, "reason", g->reason);
		gf_json_obj_end(j);
	}
	gf_json_arr_end(j);
	gf_json_arr_begin(j, "mig");
	for (int i = 0; i < inv->nmig; i++) {
		const struct gf_np_mig *m = &inv->mig[i];
		gf_json_obj_begin(j, NULL);
		gf_json_int(j, "gpu", m->gpu);
		gf_json_str(j, "profile", m->profile);
		gf_json_int(j, "start", m->start);
		gf_json_str(j, "uuid", m->uuid);
		gf_json_obj_end(j);
	}
	gf_json_arr_end(j);
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
