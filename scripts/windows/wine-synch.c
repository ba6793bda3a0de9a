/* The (empty) object file of wine-synch.def's forwarding DLL: see there. */
int ahp_wine_synch_forwarder;
