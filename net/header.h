/* One HTTP header as the client sends it (and as SigV4 signs it). */
#ifndef BEDTOP_HEADER_H
#define BEDTOP_HEADER_H
struct bt_header { const char *name; const char *value; };
#endif
