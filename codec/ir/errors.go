package ir

import "net/http"

// KindForStatus is the neutral class of an HTTP status, for errors whose body says nothing more.
func KindForStatus(status int) ErrorKind {
	switch {
	case status == http.StatusUnauthorized:
		return ErrAuthentication
	case status == http.StatusPaymentRequired:
		return ErrBilling
	case status == http.StatusForbidden:
		return ErrPermission
	case status == http.StatusNotFound:
		return ErrNotFound
	case status == http.StatusRequestTimeout, status == http.StatusGatewayTimeout:
		return ErrTimeout
	case status == http.StatusRequestEntityTooLarge:
		return ErrTooLarge
	case status == http.StatusTooManyRequests:
		return ErrRateLimit
	case status == http.StatusServiceUnavailable, status == 529:
		return ErrOverloaded
	case status >= 500 || status == 0:
		return ErrServer
	}
	return ErrInvalidRequest
}

// StatusOfKind is the HTTP status that goes with a kind when the source gave none (an
// in-band stream error): KindForStatus the other way. A format whose API answers a kind with
// another status says so beside it (messages: overloaded is 529; responses: billing is 429).
func StatusOfKind(k ErrorKind) int {
	switch k {
	case ErrInvalidRequest:
		return http.StatusBadRequest
	case ErrAuthentication:
		return http.StatusUnauthorized
	case ErrBilling:
		return http.StatusPaymentRequired
	case ErrPermission:
		return http.StatusForbidden
	case ErrNotFound:
		return http.StatusNotFound
	case ErrTooLarge:
		return http.StatusRequestEntityTooLarge
	case ErrRateLimit:
		return http.StatusTooManyRequests
	case ErrOverloaded:
		return http.StatusServiceUnavailable
	case ErrTimeout:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}
