/*
 * test_nodeproto.c - the node protocol's messages (src/nodeproto): each
 * written and read back equal, at their smallest and at every cap.
 * test_nodeproto_read.c has what the readers skip and refuse.
 */
#include <inttypes.h>

#include "nodeproto_helpers.h"

/* ---- inventory ------------------------------------------------------ */

static void inv_equal(const struct gf_np_inventory *a,
		      const struct gf_np_inventory *b)
{
	assert_string_equal(a->address, b->address);
	assert_string_equal(a->agent_url, b->agent_url);
	assert_string_equal(a->version, b->version);
	assert_string_equal(a->labels, b->labels);
	assert_string_equal(a->block, b->block);
	assert_int_equal(a->cpu_milli, b->cpu_milli);
	assert_int_equal(a->memory_mib, b->memory_mib);
	assert_string_equal(a->gpu_model, b->gpu_model);
	assert_string_equal(a->mig_model, b->mig_model);
	assert_int_equal(a->ngpus, b->ngpus);
	for (int i = 0; i < a->ngpus; i++) {
		const struct gf_np_gpu *x = &a->gpus[i], *y = &b->gpus[i];
		assert_int_equal(x->index, y->index);
		assert_string_equal(x->uuid, y->uuid);
		assert_string_equal(x->name, y->name);
		assert_int_equal(x->memory_mib, y->memory_mib);
		assert_int_equal(x->mig_mode, y->mig_mode);
		assert_int_equal(x->healthy, y->healthy);
		assert_string_equal(x->reason, y->reason);
	}
	assert_int_equal(a->nmig, b->nmig);
	for (int i = 0; i < a->nmig; i++) {
		assert_int_equal(a->mig[i].gpu, b->mig[i].gpu);
		assert_string_equal(a->mig[i].profile, b->mig[i].profile);
		assert_int_equal(a->mig[i].start, b->mig[i].start);
		assert_string_equal(a->mig[i].uuid, b->mig[i].uuid);
	}
	assert_int_equal(a->has_topo, b->has_topo);
	if (a->has_topo) {
		assert_int_equal(a->topo.ngpus, b->topo.ngpus);
		assert_int_equal(a->topo.uniform, b->topo.uniform);
		for (int x = 0; x < a->topo.ngpus; x++) {
			assert_int_equal(a->topo.nic[x], b->topo.nic[x]);
			for (int y = 0; y < a->topo.ngpus; y++)
				assert_int_equal(a->topo.pair[x][y],
						 b->topo.pair[x][y]);
		}
	}
}

static void inv_roundtrip(const struct gf_np_inventory *in,
			  const char *topology)
{
	struct doc d;
	gf_np_inventory_write(doc_begin(&d), in, topology,
			      topology ? strlen(topology) : 0);
	struct gf_jv *v = doc_end(&d);
	struct gf_np_inventory *out = gf_calloc(1, sizeof(*out));
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_np_inventory_read(v, out, &e);
	if (rc)
		print_message("read: %s\n", e.msg);
	assert_int_equal(rc, 0);
	inv_equal(in, out);
	if (topology) /* kept as it came: an object, not read here */
		assert_int_equal(gf_jv_type(gf_jv_get(v, "topology")),
				 GF_JV_OBJ);
	gf_np_inventory_free(out);
	gf_jv_free(v);
}

/* Every member written is read back as it was. */
static void test_inventory_roundtrip(void **state)
{
	(void)state;
	struct gf_np_inventory *in = gf_calloc(1, sizeof(*in));
	h100_node(in);
	inv_roundtrip(in, "{\"gpus\": [1, 2], \"nics\": {\"mlx5_0\": 1}}");
	/* uniform topology: read says so */
	for (int a = 0; a < 8; a++) {
		in->topo.nic[a] = 2;
		for (int b = 0; b < 8; b++)
			in->topo.pair[a][b] = (uint8_t)(a == b ? 0 : 9);
	}
	in->topo.uniform = true;
	inv_roundtrip(in, NULL);
	/* no GPUs: no model needed, no topology */
	gf_np_inventory_release(in);
	memset(in, 0, sizeof(*in));
	in->cpu_milli = 8000;
	in->memory_mib = 16384;
	inv_roundtrip(in, NULL);
	gf_np_inventory_free(in);
}

/* The largest inventory: 16 GPUs, 56 MIG instances, a 16x16 topology,
 * every string at its longest. */
static void test_inventory_largest(void **state)
{
	(void)state;
	struct gf_np_inventory *in = gf_calloc(1, sizeof(*in));
	fill_str(in->address, sizeof(in->address), 'a');
	fill_str(in->agent_url, sizeof(in->agent_url), 'u');
	fill_str(in->version, sizeof(in->version), 'v');
	/* labels of exactly GF_CTL_LABELS_MAX - 1 bytes: "k=vvv...v" */
	snprintf(in->labels, sizeof(in->labels), "k=");
	memset(in->labels + 2, 'v', sizeof(in->labels) - 3);
	in->labels[sizeof(in->labels) - 1] = '\0';
	fill_str(in->block, sizeof(in->block), 'b');
	in->cpu_milli = GF_JOB_CPU_MILLI_MAX;
	in->memory_mib = GF_JOB_MEMORY_MIB_MAX;
	fill_str(in->gpu_model, sizeof(in->gpu_model), 'g');
	fill_str(in->mig_model, sizeof(in->mig_model), 'm');
	gf_np_inventory_room(in, GF_CNODE_MAX_GPUS, GF_CTL_MAX_MIG);
	in->ngpus = GF_CNODE_MAX_GPUS;
	for (int g = 0; g < GF_CNODE_MAX_GPUS; g++) {
		struct gf_np_gpu *x = &in->gpus[g];
		x->index = g;
		fill_str(x->uuid, sizeof(x->uuid), (char)('A' + g));
		fill_str(x->name, sizeof(x->name), 'n');
		x->memory_mib = INT64_C(1) << 30;
		x->mig_mode = g < 8;
		x->healthy = true;
		fill_str(x->reason, sizeof(x->reason), 'r');
	}
	for (int g = 0; g < 8; g++)
		for (int s = 0; s < 7; s++) {
			struct gf_np_mig *m = &in->mig[in->nmig++];
			m->gpu = g;
			m->start = s;
			fill_str(m->profile, sizeof(m->profile), 'p');
			fill_str(m->uuid, sizeof(m->uuid), (char)('a' + g));
		}
	assert_int_equal(in->nmig, GF_CTL_MAX_MIG);
	in->has_topo = true;
	in->topo.ngpus = GF_GPU_TOPO_MAX;
	for (int a = 0; a < GF_GPU_TOPO_MAX; a++) {
		in->topo.nic[a] = 255;
		for (int b = 0; b < GF_GPU_TOPO_MAX; b++)
			in->topo.pair[a][b] = (uint8_t)(a == b ? 0 : a + b);
	}
	inv_roundtrip(in, NULL);
	/* labels one byte longer ("k=" and 254 bytes): refused */
	char text[512];
	int n = snprintf(text, sizeof(text),
			 "{\"cpu_milli\": 1, \"memory_mib\": 1, \"labels\": "
			 "{\"k\": \"%0254d\"}}",
			 0);
	struct gf_jv *v = parse(text, (size_t)n);
	struct gf_err e;
	gf_np_inventory_release(in); /* read fills no inventory in use */
	assert_int_equal(gf_np_inventory_read(v, in, &e), GF_EINVAL);
	assert_string_equal(e.msg, "'labels': longer than 255 bytes");
	assert_null(in->gpus); /* refused: nothing left to release */
	gf_jv_free(v);
	gf_free(in);
}

/* in written, as text (owned). */
static char *inv_text(const struct gf_np_inventory *in)
{
	struct gf_buf b;
	gf_buf_init(&b, 1u << 20);
	struct gf_json j;
	gf_json_init(&j, &b);
	gf_json_obj_begin(&j, NULL);
	gf_np_inventory_write(&j, in, NULL, 0);
	gf_json_obj_end(&j);
	char *s = gf_strndup(b.data, b.len);
	gf_buf_release(&b);
	return s;
}

/* What a controller keeps of a PUT (the inventory read: its arrays as
 * long as what came) is what the agent sent: written back, the same
 * text; for 16 GPUs with 56 MIG instances, for 8 with 10, for none. */
static void test_inventory_kept(void **state)
{
	(void)state;
	struct gf_np_inventory *in = gf_calloc(1, sizeof(*in));
	for (int round = 0; round < 3; round++) {
		h100_node(in);
		if (round == 1) { /* 16 GPUs, 8 in MIG mode, 7 each */
			gf_np_inventory_room(in, GF_CNODE_MAX_GPUS,
					     GF_CTL_MAX_MIG);
			in->ngpus = GF_CNODE_MAX_GPUS;
			for (int g = 0; g < in->ngpus; g++) {
				struct gf_np_gpu *x = &in->gpus[g];
				x->index = g;
				snprintf(x->uuid, sizeof(x->uuid), "GPU-%d", g);
				snprintf(x->name, sizeof(x->name), "B200");
				x->mig_mode = g >= 8;
				x->healthy = g != 2;
				if (g == 2)
					snprintf(x->reason, sizeof(x->reason),
						 "xid 48");
			}
			for (int k = 0; k < GF_CTL_MAX_MIG; k++) {
				struct gf_np_mig *m = &in->mig[in->nmig++];
				m->gpu = 8 + k / 7;
				m->start = k % 7;
				snprintf(m->profile, sizeof(m->profile),
					 "1g.23gb");
				snprintf(m->uuid, sizeof(m->uuid), "MIG-%d", k);
			}
			in->has_topo = false;
		} else if (round == 2) {
			gf_np_inventory_release(in);
			in->has_topo = false;
			in->gpu_model[0] = in->mig_model[0] = '\0';
		}
		char *sent = inv_text(in);
		struct gf_jv *v = parse(sent, strlen(sent));
		struct gf_np_inventory *kept = gf_calloc(1, sizeof(*kept));
		struct gf_err e;
		assert_int_equal(gf_np_inventory_read(v, kept, &e), 0);
		gf_jv_free(v);
		assert_int_equal(kept->ngpus, in->ngpus);
		assert_int_equal(kept->nmig, in->nmig);
		assert_true((kept->gpus == NULL) == (in->ngpus == 0));
		assert_true((kept->mig == NULL) == (in->nmig == 0));
		inv_equal(in, kept);
		char *back = inv_text(kept);
		assert_string_equal(back, sent);
		gf_free(back);
		gf_free(sent);
		gf_np_inventory_free(kept);
		gf_np_inventory_release(in);
	}
	gf_free(in);
}

/* ---- heartbeat and ack ---------------------------------------------- */

static void ref_equal(const struct gf_np_ref *a, const struct gf_np_ref *b)
{
	assert_string_equal(a->job, b->job);
	assert_int_equal(a->attempt, b->attempt);
	assert_int_equal(a->replica, b->replica);
}

static void hb_roundtrip(const struct gf_np_heartbeat *in)
{
	struct doc d;
	gf_np_heartbeat_write(doc_begin(&d), in);
	struct gf_jv *v = doc_end(&d);
	struct gf_np_heartbeat out;
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_np_heartbeat_read(v, &out, &e);
	if (rc)
		print_message("read: %s\n", e.msg);
	assert_int_equal(rc, 0);
	assert_true(out.generation == in->generation);
	assert_int_equal(out.nhealth, in->nhealth);
	for (int i = 0; i < in->nhealth; i++) {
		assert_int_equal(out.health[i].index, in->health[i].index);
		assert_int_equal(out.health[i].healthy, in->health[i].healthy);
		assert_string_equal(out.health[i].reason, in->health[i].reason);
	}
	assert_int_equal(out.nrunning, in->nrunning);
	for (int i = 0; i < in->nrunning; i++)
		ref_equal(&out.running[i], &in->running[i]);
	assert_int_equal(out.nreports, in->nreports);
	for (int i = 0; i < in->nreports; i++) {
		const struct gf_np_report *x = &out.reports[i],
					  *y = &in->reports[i];
		ref_equal(&x->ref, &y->ref);
		assert_int_equal(x->run.attempt, y->ref.attempt);
		assert_int_equal(x->run.replica, y->ref.replica);
		assert_int_equal(x->run.started_ms, y->run.started_ms);
		assert_int_equal(x->run.ended_ms, y->run.ended_ms);
		assert_int_equal(x->run.exit_code, y->run.exit_code);
		assert_int_equal(x->run.gpu_ms, y->run.gpu_ms);
		assert_string_equal(x->run.reason, y->run.reason);
	}
	assert_int_equal(out.ngpu_pods, in->ngpu_pods);
	for (int i = 0; i < in->ngpu_pods; i++) {
		const struct gf_np_gpu_pods *x = &out.gpu_pods[i],
					    *y = &in->gpu_pods[i];
		assert_string_equal(x->uuid, y->uuid);
		assert_int_equal(x->npods, y->npods);
		for (int k = 0; k < y->npods; k++)
			assert_string_equal(x->pods[k], y->pods[k]);
	}
	gf_np_heartbeat_release(&out);
	assert_null(out.running);
	assert_null(out.reports);
	assert_null(out.gpu_pods);
	gf_jv_free(v);
}

static void test_heartbeat_roundtrip(void **state)
{
	(void)state;
	struct gf_np_heartbeat hb;
	memset(&hb, 0, sizeof(hb));
	hb_roundtrip(&hb); /* empty */
	hb.generation = UINT64_C(1) << 62;
	hb.nhealth = 2;
	hb.health[0].index = 0;
	hb.health[0].healthy = true;
	hb.health[1].index = 5;
	hb.health[1].healthy = false;
	snprintf(hb.health[1].reason, sizeof(hb.health[1].reason),
		 "xid 79: fallen off the bus");
	struct gf_np_ref running[3] = { { "j1", 1, 0 },
					{ "j2", 3, 1 },
					{ "j99999999999999999999", 7, 1023 } };
	hb.nrunning = 3;
	hb.running = running;
	struct gf_np_report reports[2];
	memset(reports, 0, sizeof(reports));
	reports[0].ref = (struct gf_np_ref){ "j5", 1, 0 };
	reports[0].run.started_ms = 1700000000000;
	reports[0].run.ended_ms = 1700000060000;
	reports[0].run.exit_code = 0;
	reports[0].run.gpu_ms = 480000;
	snprintf(reports[0].run.reason, sizeof(reports[0].run.reason),
		 "exited");
	reports[1].ref = (struct gf_np_ref){ "j6", 2, 3 };
	reports[1].run.started_ms = 5;
	reports[1].run.ended_ms = 5; /* ended as it started: allowed */
	reports[1].run.exit_code = 137;
	reports[1].run.gpu_ms = 0;
	snprintf(reports[1].run.reason, sizeof(reports[1].run.reason),
		 "fenced");
	hb.nreports = 2;
	hb.reports = reports;
	struct gf_np_gpu_pods gp[2];
	memset(gp, 0, sizeof(gp));
	snprintf(gp[0].uuid, sizeof(gp[0].uuid), "GPU-0a1b");
	gp[0].npods = 2;
	snprintf(gp[0].pods[0], sizeof(gp[0].pods[0]),
		 "6f1c2a9e-0b7d-4c1e-9a55-3d2f8e7b6a10");
	snprintf(gp[0].pods[1], sizeof(gp[0].pods[1]), "p2");
	snprintf(gp[1].uuid, sizeof(gp[1].uuid),
		 "MIG-5d7e3b21-9c0a-5f44-8e6d-1a2b3c4d5e6f");
	gp[1].npods = 1;
	snprintf(gp[1].pods[0], sizeof(gp[1].pods[0]), "p3");
	hb.ngpu_pods = 2;
	hb.gpu_pods = gp;
	hb_roundtrip(&hb);
}

/* The caps: 16 health entries, 4096 running, 4096 reports. */
static void test_heartbeat_largest(void **state)
{
	(void)state;
	struct gf_np_heartbeat hb;
	memset(&hb, 0, sizeof(hb));
	hb.generation = INT64_MAX;
	hb.nhealth = GF_CNODE_MAX_GPUS;
	for (int g = 0; g < GF_CNODE_MAX_GPUS; g++) {
		hb.health[g].index = g;
		fill_str(hb.health[g].reason, sizeof(hb.health[g].reason), 'r');
	}
	hb.nrunning = GF_NP_MAX_RUNNING;
	hb.running = gf_calloc(GF_NP_MAX_RUNNING, sizeof(*hb.running));
	hb.nreports = GF_NP_MAX_REPORTS;
	hb.reports = gf_calloc(GF_NP_MAX_REPORTS, sizeof(*hb.reports));
	for (int i = 0; i < GF_NP_MAX_RUNNING; i++) {
		snprintf(hb.running[i].job, sizeof(hb.running[i].job), "j%d",
			 i + 1);
		hb.running[i].attempt = INT32_MAX;
		hb.running[i].replica = i % GF_JOB_MAX_REPLICAS;
	}
	for (int i = 0; i < GF_NP_MAX_REPORTS; i++) {
		struct gf_np_report *r = &hb.reports[i];
		fill_str(r->ref.job, sizeof(r->ref.job), '7');
		r->ref.attempt = 1;
		r->ref.replica = GF_JOB_MAX_REPLICAS - 1;
		r->run.started_ms = 1;
		r->run.ended_ms = INT64_MAX;
		r->run.exit_code = 255 + 128;
		r->run.gpu_ms = INT64_MAX;
		fill_str(r->run.reason, sizeof(r->run.reason), 'x');
	}
	hb.ngpu_pods = GF_NP_MAX_GPU_PODS;
	hb.gpu_pods = gf_calloc(GF_NP_MAX_GPU_PODS, sizeof(*hb.gpu_pods));
	for (int i = 0; i < GF_NP_MAX_GPU_PODS; i++) {
		struct gf_np_gpu_pods *g = &hb.gpu_pods[i];
		fill_str(g->uuid, sizeof(g->uuid), 'G');
		g->npods = GF_NP_PODS_PER_GPU;
		for (int k = 0; k < GF_NP_PODS_PER_GPU; k++)
			fill_str(g->pods[k], sizeof(g->pods[k]),
				 (char)('a' + k));
	}
	hb_roundtrip(&hb);
	gf_np_heartbeat_release(&hb);
}

static void ack_roundtrip(const struct gf_np_ack *in)
{
	struct doc d;
	gf_np_ack_write(doc_begin(&d), in);
	struct gf_jv *v = doc_end(&d);
	struct gf_np_ack out;
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_np_ack_read(v, &out, &e);
	if (rc)
		print_message("read: %s\n", e.msg);
	assert_int_equal(rc, 0);
	assert_string_equal(out.state, in->state);
	assert_true(out.generation == in->generation);
	assert_int_equal(out.heartbeat_ms, in->heartbeat_ms);
	assert_int_equal(out.fence_after_ms, in->fence_after_ms);
	assert_int_equal(out.nacked, in->nacked);
	for (int i = 0; i < in->nacked; i++)
		ref_equal(&out.acked[i], &in->acked[i]);
	gf_np_ack_release(&out);
	gf_jv_free(v);
}

static void test_ack_roundtrip(void **state)
{
	(void)state;
	struct gf_np_ack a = { .state = "ready",
			       .generation = 1712345678901,
			       .heartbeat_ms = 2000,
			       .fence_after_ms = 285000 };
	ack_roundtrip(&a);
	struct gf_np_ref acked[2] = { { "j5", 1, 0 }, { "j6", 2, 3 } };
	a.nacked = 2;
	a.acked = acked;
	snprintf(a.state, sizeof(a.state), "notready");
	ack_roundtrip(&a);
	/* the cap and the range ends */
	a.nacked = GF_NP_MAX_REPORTS;
	a.acked = gf_calloc(GF_NP_MAX_REPORTS, sizeof(*a.acked));
	for (int i = 0; i < a.nacked; i++)
		a.acked[i] = (struct gf_np_ref){ "j1", i + 1,
						 i % GF_JOB_MAX_REPLICAS };
	a.heartbeat_ms = 3600000;
	a.fence_after_ms = INT64_MAX;
	fill_str(a.state, sizeof(a.state), 's');
	ack_roundtrip(&a);
	a.heartbeat_ms = 10;
	a.fence_after_ms = 0;
	ack_roundtrip(&a);
	gf_free(a.acked);
}

/* ---- assignments ---------------------------------------------------- */

static void asg_equal(const struct gf_np_assignment *a,
		      const struct gf_np_assignment *b)
{
	ref_equal(&a->ref, &b->ref);
	assert_string_equal(a->name, b->name);
	assert_string_equal(a->team, b->team);
	if (a->command == NULL || b->command == NULL)
		assert_ptr_equal(a->command, b->command);
	else
		assert_string_equal(a->command, b->command);
	const char *pa[2] = { a->output, a->error },
		   *pb[2] = { b->output, b->error };
	for (int i = 0; i < 2; i++) /* logs: --output, --error */
		if (pa[i] == NULL || pb[i] == NULL)
			assert_ptr_equal(pa[i], pb[i]);
		else
			assert_string_equal(pa[i], pb[i]);
	assert_int_equal(a->place.ngpus, b->place.ngpus);
	for (int g = 0; g < a->place.ngpus; g++) {
		assert_int_equal(a->place.gpus[g], b->place.gpus[g]);
		assert_string_equal(a->uuids[g], b->uuids[g]);
	}
	assert_int_equal(a->place.gpu_milli, b->place.gpu_milli);
	assert_int_equal(a->mig, b->mig);
	assert_string_equal(a->mig_profile, b->mig_profile);
	/* the placement's own node is the reader's: not sent */
	assert_int_equal(a->place.node, -1);
	assert_string_equal(a->place.node_name, "");
	assert_int_equal(a->place.mig_start, b->mig ? b->place.mig_start : -1);
	assert_string_equal(a->mig_uuid, b->mig_uuid);
	assert_int_equal(a->cpu_milli, b->cpu_milli);
	assert_int_equal(a->memory_mib, b->memory_mib);
	assert_int_equal(a->max_runtime_s, b->max_runtime_s);
	assert_int_equal(a->world_size, b->world_size);
	assert_int_equal(a->rank, b->rank);
	assert_int_equal(a->local_rank, b->local_rank);
	assert_int_equal(a->local_world_size, b->local_world_size);
	assert_string_equal(a->master_addr, b->master_addr);
	assert_int_equal(a->master_port, b->master_port);
	assert_string_equal(a->array_job, b->array_job);
	assert_int_equal(a->array_task, b->array_task);
	assert_true((a->env == NULL) == (b->env == NULL));
	if (a->env)
		assert_string_equal(a->env, b->env);
	assert_string_equal(a->workdir, b->workdir);
	assert_string_equal(a->user, b->user);
	assert_int_equal(a->refuse_root, b->refuse_root);
}

static void asgs_roundtrip(const struct gf_np_assignments *in)
{
	struct doc d;
	struct gf_json *j = doc_begin(&d);
	gf_json_uint(j, "generation", in->generation);
	gf_json_arr_begin(j, "assignments");
	for (int i = 0; i < in->n; i++)
		gf_np_assignment_write(j, &in->v[i]);
	gf_json_arr_end(j);
	gf_np_mig_layouts_write(j, in->layouts, in->nlayouts);
	struct gf_jv *v = doc_end(&d);
	struct gf_np_assignments out;
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_np_assignments_read(v, &out, &e);
	if (rc)
		print_message("read: %s\n", e.msg);
	assert_int_equal(rc, 0);
	assert_true(out.generation == in->generation);
	assert_int_equal(out.n, in->n);
	for (int i = 0; i < in->n; i++)
		asg_equal(&out.v[i], &in->v[i]);
	assert_int_equal(out.nlayouts, in->nlayouts);
	for (int k = 0; k < in->nlayouts; k++) {
		assert_int_equal(out.layouts[k].gpu, in->layouts[k].gpu);
		assert_int_equal(out.layouts[k].n, in->layouts[k].n);
		for (int i = 0; i < in->layouts[k].n; i++) {
			assert_string_equal(out.layouts[k].inst[i].profile,
					    in->layouts[k].inst[i].profile);
			assert_int_equal(out.layouts[k].inst[i].start,
					 in->layouts[k].inst[i].start);
		}
	}
	gf_np_assignments_release(&out);
	assert_null(out.v);
	gf_jv_free(v);
}

/* A gang's replica on 8 GPUs, a MIG instance, a share, an empty list. */
static void test_assignments_roundtrip(void **state)
{
	(void)state;
	struct gf_np_assignments in;
	memset(&in, 0, sizeof(in));
	in.generation = 1712345678999;
	asgs_roundtrip(&in); /* nothing to run */
	struct gf_np_assignment v[3];
	memset(v, 0, sizeof(v));
	char cmd[] = "torchrun --nproc-per-node 8 train.py --lr 3e-4 \"x y\"";
	/* rank 1 of a 2-node gang whose master is elsewhere */
	v[0].ref = (struct gf_np_ref){ "j12", 2, 1 };
	snprintf(v[0].name, sizeof(v[0].name), "llama-ft");
	snprintf(v[0].team, sizeof(v[0].team), "vision");
	v[0].command = cmd;
	char out[] = "/scratch/%j.%r.%a.%n.out", err[] = "/scratch/%j.err";
	v[0].output = out;
	v[0].error = err;
	v[0].place.node = 3; /* the controller's: not sent */
	snprintf(v[0].place.node_name, sizeof(v[0].place.node_name), "n7");
	v[0].place.ngpus = 8;
	for (int g = 0; g < 8; g++) {
		v[0].place.gpus[g] = 7 - g;
		snprintf(v[0].uuids[g], sizeof(v[0].uuids[g]),
			 "GPU-f1ee7000-0002-4000-8000-00000000000%d", 7 - g);
	}
	v[0].place.gpu_milli = 1000;
	v[0].cpu_milli = 96000;
	v[0].memory_mib = 1 << 20;
	v[0].max_runtime_s = 86400;
	v[0].world_size = 2;
	v[0].rank = 1;
	v[0].local_rank = 0;
	v[0].local_world_size = 1;
	snprintf(v[0].master_addr, sizeof(v[0].master_addr), "10.0.0.7");
	v[0].master_port = 29512;
	/* issue 21: its environment, directory, user */
	char env[] = "{\"HF_HOME\":\"/data/hf\",\"Q\":\"a \\\"b\\\"\"}";
	v[0].env = env;
	snprintf(v[0].workdir, sizeof(v[0].workdir), "/home/alice/ft");
	snprintf(v[0].user, sizeof(v[0].user), "alice");
	v[0].refuse_root = true;
	/* a MIG instance: one GPU, its UUID unknown to the controller */
	v[1].ref = (struct gf_np_ref){ "j13", 1, 0 };
	v[1].place.ngpus = 1;
	v[1].place.gpus[0] = 6;
	v[1].place.gpu_milli = 142;
	v[1].mig = true;
	snprintf(v[1].mig_profile, sizeof(v[1].mig_profile), "1g.10gb");
	v[1].place.mig_start = 4;
	snprintf(v[1].mig_uuid, sizeof(v[1].mig_uuid),
		 "MIG-00006000-aaaa-4bbb-8ccc-000000000004");
	v[1].world_size = 1;
	v[1].local_world_size = 1;
	snprintf(v[1].array_job, sizeof(v[1].array_job), "j12"); /* task 3 */
	v[1].array_task = 3;
	/* a share of a GPU */
	v[2].ref = (struct gf_np_ref){ "j14", 1, 0 };
	v[2].place.ngpus = 1;
	v[2].place.gpus[0] = 2;
	v[2].place.gpu_milli = 500;
	v[2].cpu_milli = 4000;
	v[2].world_size = 1;
	v[2].local_world_size = 1;
	in.n = 3;
	in.v = v;
	in.nlayouts = 2;
	in.layouts[0].gpu = 6;
	in.layouts[0].n = 7;
	for (int i = 0; i < 7; i++) {
		snprintf(in.layouts[0].inst[i].profile,
			 sizeof(in.layouts[0].inst[i].profile), "1g.10gb");
		in.layouts[0].inst[i].start = i;
	}
	in.layouts[1].gpu = 7;
	in.layouts[1].n = 0; /* every instance destroyed */
	asgs_roundtrip(&in);
}

/* 4096 assignments of 16 GPUs each, 16 layouts of 8 instances, every
 * string at its longest. */
static void test_assignments_largest(void **state)
{
	(void)state;
	struct gf_np_assignments in;
	memset(&in, 0, sizeof(in));
	in.generation = INT64_MAX;
	in.n = GF_NP_MAX_RUNNING;
	in.v = gf_calloc((size_t)in.n, sizeof(*in.v));
	char *cmd = gf_malloc(GF_JOB_CMD_MAX);
	fill_str(cmd, GF_JOB_CMD_MAX, 'c');
	for (int i = 0; i < in.n; i++) {
		struct gf_np_assignment *a = &in.v[i];
		snprintf(a->ref.job, sizeof(a->ref.job), "j%d", i + 1);
		a->ref.attempt = INT32_MAX;
		a->ref.replica = GF_JOB_MAX_REPLICAS - 1;
		fill_str(a->name, sizeof(a->name), 'n');
		fill_str(a->team, sizeof(a->team), 't');
		a->command = i == 0 ? cmd : NULL;
		a->place.ngpus = GF_CNODE_MAX_GPUS;
		for (int g = 0; g < a->place.ngpus; g++) {
			a->place.gpus[g] = g;
			fill_str(a->uuids[g], sizeof(a->uuids[g]), 'u');
		}
		a->place.gpu_milli = 1000;
		a->cpu_milli = GF_JOB_CPU_MILLI_MAX;
		a->memory_mib = GF_JOB_MEMORY_MIB_MAX;
		a->max_runtime_s = GF_JOB_RUNTIME_MAX_S;
		a->world_size = GF_JOB_MAX_REPLICAS;
		a->rank = GF_JOB_MAX_REPLICAS - 1;
		a->local_world_size = GF_JOB_MAX_REPLICAS;
		a->local_rank = GF_JOB_MAX_REPLICAS - 1;
		fill_str(a->master_addr, sizeof(a->master_addr), 'm');
		a->master_port = 65535;
	}
	in.nlayouts = GF_CNODE_MAX_GPUS;
	for (int k = 0; k < in.nlayouts; k++) {
		in.layouts[k].gpu = k;
		in.layouts[k].n = 8;
		for (int i = 0; i < 8; i++) {
			fill_str(in.layouts[k].inst[i].profile,
				 sizeof(in.layouts[k].inst[i].profile), 'p');
			in.layouts[k].inst[i].start = 7;
		}
	}
	asgs_roundtrip(&in);
	gf_free(cmd);
	gf_free(in.v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inventory_roundtrip),
		cmocka_unit_test(test_inventory_largest),
		cmocka_unit_test(test_inventory_kept),
		cmocka_unit_test(test_heartbeat_roundtrip),
		cmocka_unit_test(test_heartbeat_largest),
		cmocka_unit_test(test_ack_roundtrip),
		cmocka_unit_test(test_assignments_roundtrip),
		cmocka_unit_test(test_assignments_largest),
	};
	return cmocka_run_group_tests_name("nodeproto", tests, NULL, NULL);
}
