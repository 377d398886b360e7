#include <stdio.h>
int main(void) { puts("bedtop"); return 0; }
