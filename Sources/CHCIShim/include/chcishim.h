#ifndef CHCISHIM_H
#define CHCISHIM_H
int chcishim_placeholder(void);
#endif
