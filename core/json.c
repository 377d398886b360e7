#include "core/json.h"

#include <stdio.h>
#include <stdlib.h>

char *bt_json_print(const cJSON *j, bool pretty)
{
    char *s = j ? (pretty ? cJSON_Print(j) : cJSON_PrintUnformatted(j)) : NULL;
    if (!s) {
        /* cJSON_Print fails only when its allocation does (or j is NULL, which is
         * what cJSON_Create* return when theirs did) */
        fputs("bedtop: out of memory\n", stderr);
        exit(3);
    }
    return s;
}

void bt_buf_json(struct bt_buf *b, const cJSON *j, bool pretty)
{
    char *s = bt_json_print(j, pretty);
    bt_buf_puts(b, s);
    cJSON_free(s);
}
