/*
 * gres.c - gres.conf lines and the slurm.conf node line from a node model
 * (gres.h says how Cores= and Links= are numbered).
 *
 * Invariants: GPUs are written in the node's order, which is PCI bus
 * order (gf_node_finish), the order Slurm numbers GPU devices in
 * (gres.conf(5), Links); Cores= never holds an OS CPU id, only
 * pu_core values; nothing is written for what the source does not know
 * (no Cores= without a locality, no Links= without NVLink data).
 */
#include "slurm/gres.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <gpufleet/link.h>

#include "util/fmt.h"

#define LIST_MAX 4096

bool gf_slurm_cores_known(const struct gf_node *n)
{
	int pu;
	if (gf_bitmap_is_empty(&n->cpus))
		return false;
	gf_bitmap_for_each(pu, &n->cpus)
	{
		if (n->pu_core[pu] < 0)
			return false;
	}
	return true;
}

void gf_slurm_abstract_cores(const struct gf_node *n,
			     const struct gf_bitmap *cpus,
			     struct gf_bitmap *cores)
{
	int pu;
	gf_bitmap_zero(cores);
	gf_bitmap_for_each(pu, cpus)
	{
		if (n->pu_core[pu] >= 0)
			gf_bitmap_set(cores, n->pu_core[pu]);
	}
}

void gf_slurm_core_cpus(const struct gf_node *n, const struct gf_bitmap *cores,
			struct gf_bitmap *cpus)
{
	int pu;
	gf_bitmap_zero(cpus);
	gf_bitmap_for_each(pu, &n->cpus)
	{
		if (n->pu_core[pu] >= 0 &&
		    gf_bitmap_isset(cores, n->pu_core[pu]))
			gf_bitmap_set(cpus, pu);
	}
}

/* Characters a gres Type keeps (':' ',' '=' and blanks are Slurm's). */
static bool type_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

void gf_slurm_type_name(const struct gf_node *n, int g, char *out, size_t size)
{
	const struct gf_gpu *gpu = &n->gpus[g];
	char low[sizeof(gpu->name)];
	size_t len = 0;
	/* a model the catalog does not know and NVML did not name:
	 * "NVIDIA GPU 10de:06d2" (hwloc_load.c) names no type */
	if (!gpu->model && strstr(gpu->name, " GPU ") &&
	    strchr(gpu->name, ':')) {
		out[0] = '\0';
		return;
	}
	for (const char *p = gpu->name; *p && len + 1 < sizeof(low); p++)
		low[len++] =
			type_char(*p) ? (char)tolower((unsigned char)*p) : '_';
	low[len] = '\0';
	/* first token (between '_' and '-') holding a digit */
	for (size_t i = 0; i < len;) {
		size_t j = i;
		bool digit = false;
		while (j < len && low[j] != '_' && low[j] != '-')
			digit |= isdigit((unsigned char)low[j++]) != 0;
		if (digit && j > i) {
			if (gf_fmt(out, size, "%.*s", (int)(j - i), low + i))
				out[0] = '\0'; /* too long for out: no type */
			return;
		}
		i = j + 1;
	}
	if (gf_fmt(out, size, "%s", low))
		out[0] = '\0'; /* too long for out: no type */
}

static const char *node_name(const struct gf_node *n,
			     const struct gf_slurm_gres_opts *o)
{
	return o->nodename ? o->nodename : n->hostname;
}

static int check_type(const char *type, struct gf_err *e)
{
	for (const char *p = type; *p; p++)
		if (!type_char(*p))
			return gf_err_set(e, GF_EINVAL,
					  "cannot use '%s' as a gres Type: "
					  "letters, digits, '_', '-' and '.' "
					  "only",
					  type);
	return 0;
}

static int check_name(const char *name, const struct gf_slurm_gres_opts *o,
		      struct gf_err *e)
{
	if (o->type && check_type(o->type, e))
		return e->code;
	if (!*name)
		return gf_err_set(e, GF_EINVAL,
				  "the node has no host name: give "
				  "--nodename (Slurm's NodeName, `hostname "
				  "-s` on the node)");
	for (const char *p = name; *p; p++)
		if (isspace((unsigned char)*p) || *p == '=' || *p == '#')
			return gf_err_set(e, GF_EINVAL,
					  "cannot use '%s' as a NodeName: "
					  "blanks, '=' and '#' are not allowed",
					  name);
	return 0;
}

/* Type for every GPU, or "" for all when one has no name (Slurm wants
 * the lines of one node either all typed or not). */
static bool gpu_types(const struct gf_node *n,
		      const struct gf_slurm_gres_opts *o, char (*t)[64])
{
	bool all = true;
	for (int g = 0; g < n->ngpus; g++) {
		if (o->type && gf_fmt(t[g], 64, "%s", o->type))
			t[g][0] = '\0'; /* too long: untyped, as unnamed */
		else if (!o->type)
			gf_slurm_type_name(n, g, t[g], 64);
		all &= t[g][0] != '\0';
	}
	if (!all)
		for (int g = 0; g < n->ngpus; g++)
			t[g][0] = '\0';
	return all;
}

static void links_of(const struct gf_node *n, int g, struct gf_buf *out)
{
	gf_buf_puts(out, " Links=");
	for (int j = 0; j < n->ngpus; j++)
		gf_buf_printf(out, "%s%d", j ? "," : "",
			      j == g ? -1 : (int)n->nvlinks[g][j]);
}

static void header(const struct gf_node *n, const struct gf_slurm_gres_opts *o,
		   bool typed, bool cores, struct gf_buf *out)
{
	gf_buf_printf(out,
		      "# gres.conf for node %s, written by gpufleet slurm gres "
		      "from %s\n",
		      node_name(n, o), n->source);
	bool minors = n->ngpus > 0;
	for (int g = 0; g < n->ngpus; g++)
		minors &= n->gpus[g].has_minor;
	gf_buf_puts(out, "# GPUs in PCI bus order (Slurm's device index).\n");
	if (minors)
		gf_buf_puts(out, "# File= names each GPU's device by its minor "
				 "number (NVML).\n");
	else
		gf_buf_puts(out,
			    "# File= takes /dev/nvidiaN to be GPU N (no NVML "
			    "minor numbers): check\n"
			    "# nvidia-smi --query-gpu=index,pci.bus_id against "
			    "/proc/driver/nvidia/gpus/*/information.\n");
	if (cores)
		gf_buf_puts(
			out,
			"# Cores= are Slurm's abstract core ids (hwloc Core "
			"L#, socket by socket),\n"
			"# not OS CPU ids; the OS CPUs are named above "
			"each line.\n");
	else
		gf_buf_puts(out, "# no Cores=: the source does not say which "
				 "core each CPU belongs to\n");
	if (n->nvlink_known)
		gf_buf_puts(out, "# Links= count direct NVLinks, as "
				 "AutoDetect=nvml does (NVSwitch paths are "
				 "0).\n");
	else
		gf_buf_puts(out, "# no Links=: the source does not say how the "
				 "GPUs are wired (join NVML: --nvml)\n");
	if (!typed)
		gf_buf_puts(out, "# no Type=: a GPU has no model name\n");
}

static void gpu_comment(const struct gf_node *n, int g, struct gf_buf *out)
{
	const struct gf_gpu *gpu = &n->gpus[g];
	char cl[LIST_MAX], ml[256];
	gf_bitmap_format_list(&gpu->cpus, cl, sizeof(cl));
	gf_bitmap_format_list(&gpu->mems, ml, sizeof(ml));
	gf_buf_printf(out, "# GPU%d %s %s", g, gpu->bus_id,
		      gpu->name[0] ? gpu->name : "(unknown model)");
	if (gpu->locality_known)
		gf_buf_printf(out, ", OS CPUs %s, NUMA node %s", cl, ml);
	else
		gf_buf_puts(out, ", locality unknown (no Cores=)");
	int nic[GF_MAX_NICS];
	int k = gf_link_gpu_nearest_nics(n, g, nic, GF_MAX_NICS);
	if (k > 0)
		gf_buf_printf(out, ", nearest NIC %s (%s)",
			      n->nics[nic[0]].name,
			      gf_link_class_name(gf_link_gpu_best_nic(n, g)));
	if (gpu->mig_mode == 1)
		gf_buf_puts(out, ", MIG mode on: the whole GPU is written; "
				 "AutoDetect=nvml would list its MIG devices");
	gf_buf_putc(out, '\n');
}

/* A writer of lines for node n, its NodeName checked. */
typedef void (*writer)(const struct gf_node *n,
		       const struct gf_slurm_gres_opts *o, const char *name,
		       struct gf_buf *out);

/* Check the NodeName and the Type, then write: 0, or the error. */
static int write_checked(const struct gf_node *n,
			 const struct gf_slurm_gres_opts *o, writer w,
			 struct gf_buf *out, struct gf_err *e)
{
	const char *name = node_name(n, o);
	int rc = check_name(name, o, e);
	if (rc)
		return rc;
	w(n, o, name, out);
	return gf_buf_error(out);
}

static void gres_lines(const struct gf_node *n,
		       const struct gf_slurm_gres_opts *o, const char *name,
		       struct gf_buf *out)
{
	char types[GF_MAX_GPUS][64];
	bool typed = gpu_types(n, o, types);
	bool cores = gf_slurm_cores_known(n);
	const char *dev = o->dev_dir ? o->dev_dir : "/dev";
	if (o->comments)
		header(n, o, typed, cores, out);
	gf_buf_printf(out, "AutoDetect=%s\n",
		      o->autodetect_nvml ? "nvml" : "off");
	for (int g = 0; g < n->ngpus; g++) {
		const struct gf_gpu *gpu = &n->gpus[g];
		if (o->comments)
			gpu_comment(n, g, out);
		gf_buf_printf(out, "NodeName=%s Name=gpu", name);
		if (types[g][0])
			gf_buf_printf(out, " Type=%s", types[g]);
		gf_buf_printf(out, " File=%s/nvidia%d", dev,
			      gpu->has_minor ? gpu->minor : g);
		if (cores && gpu->locality_known) {
			struct gf_bitmap c;
			char cl[LIST_MAX];
			gf_slurm_abstract_cores(n, &gpu->cpus, &c);
			gf_bitmap_format_list(&c, cl, sizeof(cl));
			gf_buf_printf(out, " Cores=%s", cl);
		}
		if (n->nvlink_known)
			links_of(n, g, out);
		gf_buf_puts(out, gpu->vendor == GF_VENDOR_AMD
					 ? " Flags=amd_gpu_env\n"
					 : " Flags=nvidia_gpu_env\n");
	}
}

int gf_slurm_gres_conf(const struct gf_node *n,
		       const struct gf_slurm_gres_opts *o, struct gf_buf *out,
		       struct gf_err *e)
{
	return write_checked(n, o, gres_lines, out, e);
}

/* Sockets, cores per socket, threads per core; false when uneven. */
static bool cpu_shape(const struct gf_node *n, int *sockets, int *cores,
		      int *threads)
{
	int per_pkg[GF_BITMAP_BITS];
	struct gf_bitmap pkgs, cs;
	gf_bitmap_zero(&pkgs);
	gf_bitmap_zero(&cs);
	memset(per_pkg, 0, sizeof(per_pkg));
	int pu, npu = 0;
	gf_bitmap_for_each(pu, &n->cpus)
	{
		int c = n->pu_core[pu], k = n->pu_package[pu];
		npu++;
		if (c < 0 || k < 0)
			return false;
		gf_bitmap_set(&pkgs, k);
		if (!gf_bitmap_isset(&cs, c)) {
			gf_bitmap_set(&cs, c);
			per_pkg[k]++;
		}
	}
	*sockets = gf_bitmap_count(&pkgs);
	int ncores = gf_bitmap_count(&cs);
	if (*sockets == 0 || ncores == 0 || ncores % *sockets || npu % ncores)
		return false;
	*cores = ncores / *sockets;
	*threads = npu / ncores;
	int k;
	gf_bitmap_for_each(k, &pkgs)
	{
		if (per_pkg[k] != *cores)
			return false;
	}
	return true;
}

static void node_line(const struct gf_node *n,
		      const struct gf_slurm_gres_opts *o, const char *name,
		      struct gf_buf *out)
{
	int sockets, cores, threads;
	bool even = cpu_shape(n, &sockets, &cores, &threads);
	if (!even)
		gf_buf_puts(out, "# the packages hold different numbers of "
				 "cores (or cores of threads), or the source "
				 "does not say: CPUs= only\n");
	gf_buf_printf(out, "NodeName=%s CPUs=%d", name,
		      gf_bitmap_count(&n->cpus));
	if (even)
		gf_buf_printf(out,
			      " Boards=1 SocketsPerBoard=%d CoresPerSocket=%d "
			      "ThreadsPerCore=%d",
			      sockets, cores, threads);
	uint64_t mem = 0;
	for (int i = 0; i < n->nnuma; i++)
		mem += n->numa[i].memory_bytes;
	if (mem >> 20)
		gf_buf_printf(out, " RealMemory=%llu",
			      (unsigned long long)(mem >> 20));
	char types[GF_MAX_GPUS][64];
	gpu_types(n, o, types);
	gf_buf_puts(out, " Gres=");
	for (int g = 0; g < n->ngpus; g++) {
		int first = g, count = 0;
		for (int h = 0; h < g && first == g; h++)
			if (strcmp(types[h], types[g]) == 0)
				first = h;
		if (first != g)
			continue; /* counted with its first */
		for (int h = g; h < n->ngpus; h++)
			count += strcmp(types[h], types[g]) == 0;
		gf_buf_printf(out, "%sgpu%s%s:%d", g ? "," : "",
			      types[g][0] ? ":" : "", types[g], count);
	}
	gf_buf_putc(out, '\n');
}

int gf_slurm_node_line(const struct gf_node *n,
		       const struct gf_slurm_gres_opts *o, struct gf_buf *out,
		       struct gf_err *e)
{
	return write_checked(n, o, node_line, out, e);
}
