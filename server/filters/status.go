package filters

import (
	"encoding/json"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// writeStatusObject writes a complete Status as JSON. A filter after the
// audit filter writes to its writer, which records the Status.
func writeStatusObject(w http.ResponseWriter, status *metav1.Status) {
	if aw, ok := w.(*auditWriter); ok {
		aw.ac.SetResponseStatus(&metav1.Status{Status: status.Status, Message: status.Message,
			Reason: status.Reason, Details: status.Details, Code: status.Code})
	}
	status.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	body, _ := json.Marshal(status)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(int(status.Code))
	_, _ = w.Write(body)
}

// writeStatus writes a failure Status as JSON.
func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, message string) {
	writeStatusObject(w, &metav1.Status{Status: metav1.StatusFailure, Message: message, Reason: reason, Code: int32(code)})
}
