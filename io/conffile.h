/* The files a config is made of: the config itself (bedtop.conf(5)) and the
 * installed burndown table. core/config_ini.c and core/burndown.c parse the text. */
#ifndef BEDTOP_IO_CONFFILE_H
#define BEDTOP_IO_CONFFILE_H
#include <stdbool.h>
#include <stddef.h>

#include "core/config.h"

/* bt_config_defaults, then the installed burndown table (a failure is kept in
 * burndown_error, for bt_config_parse_string and the caller to report). */
void bt_config_init(struct bt_config *c);
/* Loads path (NULL: $XDG_CONFIG_HOME/bedtop/config if it exists), the burndown
 * table first if c has none. On error writes "file:line: why" into err and
 * returns false. */
bool bt_config_load(struct bt_config *c, const char *path, char *err, size_t errlen);

/* Appends the rows of a price table file (regular: only a regular file, for the
 * cache bedtop's Price List API collector writes); false with "path: why". */
bool bt_prices_load_file(struct bt_prices *p, const char *path, bool regular, char *err,
                         size_t errlen);
/* Loads data/prices.conf then $XDG_CACHE_HOME/bedtop/prices.conf (once per config);
 * what could not be read is kept in c->prices_note. */
void bt_prices_load_default(struct bt_config *c);
bool bt_burndown_load_file(struct bt_burndown *b, const char *path, char *err, size_t errlen);
/* Loads the installed table (BEDTOP_DATADIR, then ./data beside the binary). */
bool bt_burndown_load_default(struct bt_burndown *b, char *err, size_t errlen);
#endif
