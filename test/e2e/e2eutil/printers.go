package e2eutil

const TableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"
