/*
 * glpk_lib.h - GLPK, opened the first time an LP is solved (util/dynlib.h):
 * the MIG planner, the placement look-ahead and simulate's bound include
 * this instead of <glpk.h> and call GLPK by its own names.
 */
#ifndef GF_UTIL_GLPK_LIB_H
#define GF_UTIL_GLPK_LIB_H

#include <glpk.h>

#include "util/dynlib.h"

#define GF_GLPK_FUNCS(X)      \
	X(glp_add_cols)       \
	X(glp_add_rows)       \
	X(glp_create_prob)    \
	X(glp_delete_prob)    \
	X(glp_get_col_prim)   \
	X(glp_get_num_cols)   \
	X(glp_get_num_rows)   \
	X(glp_get_obj_coef)   \
	X(glp_get_obj_val)    \
	X(glp_get_row_dual)   \
	X(glp_get_status)     \
	X(glp_init_iocp)      \
	X(glp_init_smcp)      \
	X(glp_intopt)         \
	X(glp_ios_best_node)  \
	X(glp_ios_get_prob)   \
	X(glp_ios_node_bound) \
	X(glp_ios_reason)     \
	X(glp_ios_terminate)  \
	X(glp_load_matrix)    \
	X(glp_mip_col_val)    \
	X(glp_mip_obj_val)    \
	X(glp_mip_status)     \
	X(glp_scale_prob)     \
	X(glp_set_col_bnds)   \
	X(glp_set_col_kind)   \
	X(glp_set_mat_col)    \
	X(glp_set_mat_row)    \
	X(glp_set_obj_coef)   \
	X(glp_set_obj_dir)    \
	X(glp_set_row_bnds)   \
	X(glp_simplex)        \
	X(glp_std_basis)      \
	X(glp_term_out)
GF_DYNLIB_STRUCT(gf_glpk_fns, GF_GLPK_FUNCS);
extern struct gf_dynlib gf_glpk_lib;

/* GLPK opened: 0, or GF_ENOTSUP saying why in e. */
static inline int gf_glpk_open(struct gf_err *e)
{
	return gf_dynlib_open(&gf_glpk_lib, e);
}

#define GF__GLP(name)	   (GF_DYNLIB_FNS(&gf_glpk_lib, gf_glpk_fns)->name)
#define glp_add_cols	   GF__GLP(glp_add_cols)
#define glp_add_rows	   GF__GLP(glp_add_rows)
#define glp_create_prob	   GF__GLP(glp_create_prob)
#define glp_delete_prob	   GF__GLP(glp_delete_prob)
#define glp_get_col_prim   GF__GLP(glp_get_col_prim)
#define glp_get_num_cols   GF__GLP(glp_get_num_cols)
#define glp_get_num_rows   GF__GLP(glp_get_num_rows)
#define glp_get_obj_coef   GF__GLP(glp_get_obj_coef)
#define glp_get_obj_val	   GF__GLP(glp_get_obj_val)
#define glp_get_row_dual   GF__GLP(glp_get_row_dual)
#define glp_get_status	   GF__GLP(glp_get_status)
#define glp_init_iocp	   GF__GLP(glp_init_iocp)
#define glp_init_smcp	   GF__GLP(glp_init_smcp)
#define glp_intopt	   GF__GLP(glp_intopt)
#define glp_ios_best_node  GF__GLP(glp_ios_best_node)
#define glp_ios_get_prob   GF__GLP(glp_ios_get_prob)
#define glp_ios_node_bound GF__GLP(glp_ios_node_bound)
#define glp_ios_reason	   GF__GLP(glp_ios_reason)
#define glp_ios_terminate  GF__GLP(glp_ios_terminate)
#define glp_load_matrix	   GF__GLP(glp_load_matrix)
#define glp_mip_col_val	   GF__GLP(glp_mip_col_val)
#define glp_mip_obj_val	   GF__GLP(glp_mip_obj_val)
#define glp_mip_status	   GF__GLP(glp_mip_status)
#define glp_scale_prob	   GF__GLP(glp_scale_prob)
#define glp_set_col_bnds   GF__GLP(glp_set_col_bnds)
#define glp_set_col_kind   GF__GLP(glp_set_col_kind)
#define glp_set_mat_col	   GF__GLP(glp_set_mat_col)
#define glp_set_mat_row	   GF__GLP(glp_set_mat_row)
#define glp_set_obj_coef   GF__GLP(glp_set_obj_coef)
#define glp_set_obj_dir	   GF__GLP(glp_set_obj_dir)
#define glp_set_row_bnds   GF__GLP(glp_set_row_bnds)
#define glp_simplex	   GF__GLP(glp_simplex)
#define glp_std_basis	   GF__GLP(glp_std_basis)
#define glp_term_out	   GF__GLP(glp_term_out)

#endif
