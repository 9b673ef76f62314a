/* TEMPORARY: stands in for src/io/io-onnx-import.c until the importer lands
 * on main; deleted by the merge that brings it. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "st-onnx.h"

int
st_onnx_import(const st_onnx_model *m, const st_registry *r, const st_onnx_import_options *opt,
               st_onnx_import_result *out, st_diag *d)
{
	(void)m;
	(void)r;
	(void)opt;
	memset(out, 0, sizeof *out);
	st_diag_add(d, ST_SEVERITY_ERROR, NULL, 0, 0, "the ONNX importer is not built yet");
	return -1;
}

void
st_onnx_import_free(st_onnx_import_result *imp)
{
	memset(imp, 0, sizeof *imp);
}
