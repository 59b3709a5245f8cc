"""Verify's second reference from another machine: upstream's outputs saved as a reference set
(`store`), or served by a reference server (`server`, asked by `client`); `source` says where a
verify takes them from."""
