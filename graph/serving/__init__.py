"""The serving layer: how a query travels from a request to an answer.

A request's query is checked by :mod:`.guard` (text), queued fairly per client by
:mod:`.fairshare`, and run by :mod:`.pool` in a worker process forked from a zygote that
:mod:`.sandbox` has cut off from the network; :mod:`.memory` keeps the workers' memory in check.
"""
