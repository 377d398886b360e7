/* cJSON's printers with bedtop's out-of-memory rule (bt_xmalloc's: say so, exit 3),
 * so no caller meets a NULL from cJSON_Print. What cJSON allocates is released with
 * cJSON_free, never free: cJSON may run on other allocation hooks. */
#ifndef BEDTOP_JSON_H
#define BEDTOP_JSON_H
#include <cjson/cJSON.h>
#include <stdbool.h>

#include "core/util.h"

/* j printed (pretty: cJSON_Print's layout, else one line); never NULL. Release
 * with cJSON_free. */
char *bt_json_print(const cJSON *j, bool pretty);
/* Appends j, printed, to b. */
void bt_buf_json(struct bt_buf *b, const cJSON *j, bool pretty);
#endif
