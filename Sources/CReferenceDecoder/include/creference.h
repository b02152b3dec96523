#ifndef CREFERENCE_H
#define CREFERENCE_H
int creference_placeholder(void);
#endif
