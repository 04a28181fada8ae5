package tdstest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/service"
	"github.com/jcmturner/gokrb5/v8/spnego"
)

// Kerberos makes the server accept integrated (Windows) logins as SQL
// Server does with its service account: LOGIN7 carries a SPNEGO token
// whose Kerberos AP-REQ must decrypt with a key of Keytab (so a ticket for
// another SPN fails) and pass gokrb5's checks (ticket times, authenticator
// within five minutes of this machine's clock, no replay).
type Kerberos struct {
	// Keytab is the service keytab (kadmin ktadd -k …), holding the key of
	// every SPN the server answers to.
	Keytab []byte
	// Logins are the client principals allowed to log in, as
	// "name@REALM"; empty allows any principal the ticket proves.
	Logins []string
}

// FedAuthVerifier checks an Entra ID access token received in a login and
// returns the principal it names; an error fails the login with 18456.
type FedAuthVerifier func(token string) (principal string, err error)

// Authentication kinds recorded in Login.Auth.
const (
	AuthSQL      = "sql"
	AuthKerberos = "kerberos"
	AuthFedAuth  = "fedauth"
)

// FEDAUTH feature extension (MS-TDS 2.2.6.4 FeatureExt) and its libraries.
const (
	featFedAuth     = 0x02
	featTerminator  = 0xFF
	fedLibSecToken  = 0x01 // the token rides in LOGIN7 itself
	fedLibADAL      = 0x02 // the server asks for it with FEDAUTHINFO
	fExtension      = 0x10 // OptionFlags3: LOGIN7 has a FeatureExt block
	offExtension    = 56
	offSSPI         = 78
	offSSPILong     = 90
	preFedAuthReq   = 0x06 // PRELOGIN FEDAUTHREQUIRED
	pktFedAuthToken = 0x08
	tokFedAuthInfo  = 0xEE
	fedInfoSTSURL   = 0x01
	fedInfoSPN      = 0x02
)

// fedAuthRequest is the FEDAUTH feature a client sent in LOGIN7.
type fedAuthRequest struct {
	library byte
	token   string // fedLibSecToken only
}

// decodeLoginAuth reads LOGIN7's SSPI bytes and its FEDAUTH feature.
func decodeLoginAuth(b []byte, l *login7) error {
	off := int(binary.LittleEndian.Uint16(b[offSSPI:]))
	n := int(binary.LittleEndian.Uint16(b[offSSPI+2:]))
	if n == 0xFFFF {
		n = int(binary.LittleEndian.Uint32(b[offSSPILong:]))
	}
	if n > 0 {
		if off+n > len(b) {
			return fmt.Errorf("tds: LOGIN7 SSPI (offset %d, %d bytes) outside message", off, n)
		}
		l.SSPIToken = b[off : off+n]
	}
	if b[27]&fExtension == 0 {
		return nil
	}
	at := int(binary.LittleEndian.Uint16(b[offExtension:]))
	if at+4 > len(b) {
		return fmt.Errorf("tds: LOGIN7 extension pointer at %d outside message", at)
	}
	p := int(binary.LittleEndian.Uint32(b[at:]))
	for p < len(b) && b[p] != featTerminator {
		if p+5 > len(b) {
			return errors.New("tds: LOGIN7 FeatureExt truncated")
		}
		id, size := b[p], int(binary.LittleEndian.Uint32(b[p+1:]))
		p += 5
		if size < 0 || p+size > len(b) {
			return fmt.Errorf("tds: LOGIN7 feature %#x of %d bytes outside message", id, size)
		}
		data := b[p : p+size]
		p += size
		if id != featFedAuth || len(data) < 1 {
			continue
		}
		f := &fedAuthRequest{library: data[0] >> 1}
		if f.library == fedLibSecToken {
			if len(data) < 5 {
				return errors.New("tds: FEDAUTH security token truncated")
			}
			tn := int(binary.LittleEndian.Uint32(data[1:]))
			if 5+tn > len(data) {
				return errors.New("tds: FEDAUTH security token truncated")
			}
			f.token = fromUCS2(data[5 : 5+tn])
		}
		l.FedAuth = f
	}
	return nil
}

// acceptKerberos verifies a SPNEGO token holding a Kerberos AP-REQ with
// the service keytab and returns the client's principal (name@REALM).
// No AP-REP goes back for mutual authentication: go-mssqldb's krb5
// authenticator reads the server's SSPI token as a reply of its own and
// gokrb5 cannot verify an AP-REP, so LOGINACK alone ends the login.
func acceptKerberos(k *Kerberos, token []byte) (principal string, err error) {
	var kt keytab.Keytab
	if err := kt.Unmarshal(k.Keytab); err != nil {
		return "", fmt.Errorf("service keytab: %w", err)
	}
	var st spnego.SPNEGOToken
	if err := st.Unmarshal(token); err != nil {
		return "", fmt.Errorf("not a SPNEGO token: %w", err)
	}
	if !st.Init {
		return "", errors.New("SPNEGO: expected NegTokenInit")
	}
	var mt spnego.KRB5Token
	if err := mt.Unmarshal(st.NegTokenInit.MechTokenBytes); err != nil {
		return "", fmt.Errorf("SPNEGO mechanism token: %w", err)
	}
	if !mt.IsAPReq() {
		return "", errors.New("SPNEGO mechanism token is not a Kerberos AP-REQ")
	}
	ok, creds, err := service.VerifyAPREQ(&mt.APReq, service.NewSettings(&kt, service.DecodePAC(false)))
	if err != nil {
		return "", fmt.Errorf("AP-REQ for %s: %w", mt.APReq.Ticket.SName.PrincipalNameString(), err)
	}
	if !ok {
		return "", errors.New("AP-REQ not valid")
	}
	principal = creds.UserName() + "@" + creds.Domain()
	if len(k.Logins) > 0 {
		allowed := false
		for _, p := range k.Logins {
			allowed = allowed || strings.EqualFold(p, principal)
		}
		if !allowed {
			return principal, fmt.Errorf("no login for %s", principal)
		}
	}
	return principal, nil
}

// fedAuthInfoReply asks an ADAL-workflow client for its token, naming the
// authority and the resource as Azure SQL does.
func fedAuthInfoReply() []byte {
	opts := []struct {
		id   byte
		data []byte
	}{
		{fedInfoSTSURL, appendUCS2(nil, "https://login.microsoftonline.com/00000000-0000-0000-0000-000000000001")},
		{fedInfoSPN, appendUCS2(nil, "https://database.windows.net/")},
	}
	head := binary.LittleEndian.AppendUint32(nil, uint32(len(opts)))
	off := 4 + 9*len(opts)
	var data []byte
	for _, o := range opts {
		head = append(head, o.id)
		head = binary.LittleEndian.AppendUint32(head, uint32(len(o.data)))
		head = binary.LittleEndian.AppendUint32(head, uint32(off+len(data)))
		data = append(data, o.data...)
	}
	body := append(head, data...)
	b := []byte{tokFedAuthInfo}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(body)))
	return append(b, body...)
}

// decodeFedAuthToken reads a FEDAUTH token message (packet type 8).
func decodeFedAuthToken(b []byte) (string, error) {
	if len(b) < 8 {
		return "", errors.New("tds: FEDAUTH token message truncated")
	}
	n := int(binary.LittleEndian.Uint32(b[4:]))
	if n < 0 || 8+n > len(b) {
		return "", errors.New("tds: FEDAUTH token longer than its message")
	}
	return fromUCS2(b[8 : 8+n]), nil
}

// loginFailedWindows is SQL Server's answer to an integrated login it
// cannot accept (a ticket its keys cannot open, a principal without a
// login).
func loginFailedWindows() []byte {
	b := appendError(nil, Error{Number: 18452, State: 1, Class: 14,
		Message: "Login failed. The login is from an untrusted domain and cannot be used with Integrated authentication."})
	return appendDone(b, tokDone, doneError, 0, 0)
}
