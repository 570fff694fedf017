/*
 * render.c - topology output.  The matrix section reproduces nvidia-smi's
 * layout cell for cell (tab-separated, " X " on the diagonal, CPU/NUMA
 * affinity columns, legend, NIC legend), so users can diff the two.
 */
#include "topo/render.h"

#include <stdio.h>

#include <gpufleet/link.h>

#include "topo/source.h"
#include "util/fmt.h"
#include "util/json.h"

static const char legend[] =
	"Legend:\n"
	"\n"
	"  X    = Self\n"
	"  SYS  = Connection traversing PCIe as well as the SMP interconnect "
	"between NUMA nodes (e.g., QPI/UPI)\n"
	"  NODE = Connection traversing PCIe as well as the interconnect "
	"between PCIe Host Bridges within a NUMA node\n"
	"  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge "
	"(typically the CPU)\n"
	"  PXB  = Connection traversing multiple PCIe bridges (without "
	"traversing the PCIe Host Bridge)\n"
	"  PIX  = Connection traversing at most a single PCIe bridge\n"
	"  NV#  = Connection traversing a bonded set of # NVLinks\n";

static void dev_name(const struct gf_node *n, int d, char *out, size_t size)
{
	if (d < n->ngpus)
		gf_note(out, size, "GPU%d", d);
	else
		gf_note(out, size, "NIC%d", d - n->ngpus);
}

static void affinity(const struct gf_bitmap *b, bool known, char *out,
		     size_t size)
{
	if (!known || gf_bitmap_is_empty(b))
		gf_note(out, size, "N/A");
	else if (gf_bitmap_format_list(b, out, size) < 0)
		gf_note(out, size, "(too long)");
}

int gf_render_matrix(const struct gf_node *n, bool pcie_only,
		     struct gf_buf *out)
{
	int nd = n->ngpus + n->nnics;
	char name[16], cell[16];
	gf_buf_putc(out, '\t');
	for (int d = 0; d < nd; d++) {
		dev_name(n, d, name, sizeof(name));
		gf_buf_printf(out, "%s\t", name);
	}
	gf_buf_puts(out, "CPU Affinity\tNUMA Affinity\tGPU NUMA ID\n");
	for (int r = 0; r < nd; r++) {
		dev_name(n, r, name, sizeof(name));
		gf_buf_puts(out, name);
		for (int c = 0; c < nd; c++) {
			gf_link_format(gf_link_between(n, r, c, pcie_only),
				       cell, sizeof(cell));
			gf_buf_printf(out, "\t%s", cell);
		}
		if (r < n->ngpus) {
			const struct gf_gpu *g = &n->gpus[r];
			char cpus[2048], mems[256];
			affinity(&g->cpus, g->locality_known, cpus,
				 sizeof(cpus));
			affinity(&g->mems, g->locality_known, mems,
				 sizeof(mems));
			gf_buf_printf(out, "\t%s\t%s\t\t", cpus, mems);
			if (g->numa_id >= 0)
				gf_buf_printf(out, "%d", g->numa_id);
			else
				gf_buf_puts(out, "N/A");
		}
		gf_buf_putc(out, '\n');
	}
	gf_buf_puts(out, "\n");
	gf_buf_puts(out, legend);
	if (n->nnics > 0) {
		gf_buf_puts(out, "\nNIC Legend:\n\n");
		for (int i = 0; i < n->nnics; i++)
			gf_buf_printf(out, "  NIC%d: %s\n", i, n->nics[i].name);
	}
	return gf_buf_error(out);
}

static void nearest_list(const struct gf_node *n, int g, char *out, size_t size)
{
	int idx[GF_MAX_NICS];
	int k = gf_link_gpu_nearest_nics(n, g, idx, GF_MAX_NICS);
	size_t len = 0;
	out[0] = '\0';
	if (k == 0) {
		gf_note(out, size, "none");
		return;
	}
	for (int i = 0; i < k && len + 40 < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%s",
					i ? "," : "", n->nics[idx[i]].name);
	gf_note(out + len, size - len, " (%s)",
		gf_link_class_name(gf_link_gpu_best_nic(n, g)));
}

int gf_render_topo_text(const struct gf_node *n, bool pcie_only,
			const struct gf_finding *f, int nf, struct gf_buf *out)
{
	if (gf_render_matrix(n, pcie_only, out))
		return gf_buf_error(out);
	gf_buf_puts(out, "\nGPUs:\n\n");
	for (int i = 0; i < n->ngpus; i++) {
		const struct gf_gpu *g = &n->gpus[i];
		char near[512];
		nearest_list(n, i, near, sizeof(near));
		gf_buf_printf(out, "  GPU%d: %s, %s", i, g->name, g->bus_id);
		if (g->uuid[0])
			gf_buf_printf(out, ", %s", g->uuid);
		if (g->mig_mode >= 0)
			gf_buf_printf(out, ", MIG %s",
				      g->mig_mode ? "on" : "off");
		gf_buf_printf(out, "; nearest NIC: %s\n", near);
	}
	gf_buf_puts(out, "\nFindings:\n\n");
	if (nf == 0)
		gf_buf_puts(out, "  none: GPUs, NICs and CPUs are aligned\n");
	for (int i = 0; i < nf; i++)
		gf_buf_printf(out, "  %s [%s]: %s\n",
			      gf_severity_name(f[i].sev), f[i].code, f[i].msg);
	if (n->nnotes > 0) {
		gf_buf_puts(out, "\nNotes:\n\n");
		for (int i = 0; i < n->nnotes; i++)
			gf_buf_printf(out, "  %s\n", n->notes[i]);
	}
	return gf_buf_error(out);
}

static void json_bitmap(struct gf_json *j, const char *key,
			const struct gf_bitmap *b, bool known)
{
	char tmp[2048];
	if (!known || gf_bitmap_format_list(b, tmp, sizeof(tmp)) < 0)
		gf_json_null(j, key);
	else
		gf_json_str(j, key, tmp);
}

int gf_render_topo_json(const struct gf_node *n, bool pcie_only,
			const struct gf_finding *f, int nf, struct gf_buf *out)
{
	struct gf_json j;
	char cell[16];
	gf_json_init(&j, out);
	gf_json_obj_begin(&j, NULL);
	gf_json_str(&j, "source", n->source);
	gf_json_str(&j, "hostname", n->hostname);
	gf_json_bool(&j, "nvml", n->nvml_used);
	gf_json_int(&j, "cpus", gf_bitmap_count(&n->cpus));
	gf_json_arr_begin(&j, "numa_nodes");
	for (int i = 0; i < n->nnuma; i++) {
		gf_json_obj_begin(&j, NULL);
		gf_json_int(&j, "os_index", n->numa[i].os_index);
		json_bitmap(&j, "cpus", &n->numa[i].cpus, true);
		gf_json_uint(&j, "memory_bytes", n->numa[i].memory_bytes);
		gf_json_obj_end(&j);
	}
	gf_json_arr_end(&j);
	gf_json_arr_begin(&j, "gpus");
	for (int i = 0; i < n->ngpus; i++) {
		const struct gf_gpu *g = &n->gpus[i];
		gf_json_obj_begin(&j, NULL);
		gf_json_int(&j, "index", i);
		gf_json_str(&j, "name", g->name);
		gf_json_str_or_null(&j, "model",
				    g->model ? g->model->id : NULL);
		gf_json_str(&j, "vendor",
			    g->vendor == GF_VENDOR_AMD ? "amd" : "nvidia");
		gf_json_str(&j, "bus_id", g->bus_id);
		gf_json_str_or_null(&j, "uuid", g->uuid);
		gf_json_uint(&j, "memory_mib", g->memory_mib);
		if (g->mig_mode >= 0)
			gf_json_bool(&j, "mig_enabled", g->mig_mode == 1);
		else
			gf_json_null(&j, "mig_enabled");
		json_bitmap(&j, "cpu_affinity", &g->cpus, g->locality_known);
		json_bitmap(&j, "numa_affinity", &g->mems, g->locality_known);
		if (g->numa_id >= 0)
			gf_json_int(&j, "gpu_numa_id", g->numa_id);
		else
			gf_json_null(&j, "gpu_numa_id");
		int idx[GF_MAX_NICS];
		int k = gf_link_gpu_nearest_nics(n, i, idx, GF_MAX_NICS);
		gf_json_arr_begin(&j, "nearest_nics");
		for (int x = 0; x < k; x++)
			gf_json_str(&j, NULL, n->nics[idx[x]].name);
		gf_json_arr_end(&j);
		if (k)
			gf_json_str(
				&j, "nearest_nic_link",
				gf_link_class_name(gf_link_gpu_best_nic(n, i)));
		else
			gf_json_null(&j, "nearest_nic_link");
		gf_json_obj_end(&j);
	}
	gf_json_arr_end(&j);
	gf_json_arr_begin(&j, "nics");
	for (int i = 0; i < n->nnics; i++) {
		const struct gf_nic *c = &n->nics[i];
		gf_json_obj_begin(&j, NULL);
		gf_json_int(&j, "index", i);
		gf_json_str(&j, "name", c->name);
		gf_json_str(&j, "netdev", c->netdev);
		gf_json_bool(&j, "rdma", c->rdma);
		gf_json_str(&j, "bus_id", c->bus_id);
		json_bitmap(&j, "cpu_affinity", &c->cpus, c->locality_known);
		json_bitmap(&j, "numa_affinity", &c->mems, c->locality_known);
		gf_json_obj_end(&j);
	}
	gf_json_arr_end(&j);
	gf_json_obj_begin(&j, "matrix");
	gf_json_bool(&j, "pcie_only", pcie_only);
	int nd = n->ngpus + n->nnics;
	gf_json_arr_begin(&j, "devices");
	for (int d = 0; d < nd; d++) {
		char name[16];
		dev_name(n, d, name, sizeof(name));
		gf_json_str(&j, NULL, name);
	}
	gf_json_arr_end(&j);
	gf_json_arr_begin(&j, "rows");
	for (int r = 0; r < nd; r++) {
		gf_json_arr_begin(&j, NULL);
		for (int c = 0; c < nd; c++) {
			struct gf_link l = gf_link_between(n, r, c, pcie_only);
			if (l.cls == GF_LINK_X)
				gf_note(cell, sizeof(cell), "X");
			else
				gf_link_format(l, cell, sizeof(cell));
			gf_json_str(&j, NULL, cell);
		}
		gf_json_arr_end(&j);
	}
	gf_json_arr_end(&j);
	gf_json_obj_end(&j);
	gf_json_arr_begin(&j, "findings");
	for (int i = 0; i < nf; i++) {
		gf_json_obj_begin(&j, NULL);
		gf_json_str(&j, "severity", gf_severity_name(f[i].sev));
		gf_json_str(&j, "code", f[i].code);
		gf_json_str(&j, "message", f[i].msg);
		gf_json_obj_end(&j);
	}
	gf_json_arr_end(&j);
	gf_json_arr_begin(&j, "notes");
	for (int i = 0; i < n->nnotes; i++)
		gf_json_str(&j, NULL, n->notes[i]);
	gf_json_arr_end(&j);
	gf_json_obj_end(&j);
	return gf_json_error(&j);
}

int gf_render_topo_error_json(const struct gf_node_source *src,
			      const struct gf_err *e, struct gf_buf *out)
{
	char name[256];
	struct gf_json j;
	gf_json_init(&j, out);
	gf_json_obj_begin(&j, NULL);
	gf_json_str(&j, "source", gf_node_source_name(src, name, sizeof(name)));
	gf_json_arr_begin(&j, "gpus");
	gf_json_arr_end(&j);
	gf_json_str(&j, "error",
		    e->code == GF_ENOGPU ? "no-gpu" : "unreadable");
	gf_json_str(&j, "detail", e->msg);
	gf_json_obj_end(&j);
	return gf_json_error(&j);
}
