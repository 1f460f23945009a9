/**
 * The SCA methods of the embedded approach, as the standard's `authenticationObject` and
 * `challengeData` describe them: every PSU has the same three OTP methods.
 */
import { SANDBOX_OTP } from "./test_users.ts";

/** An authentication object (`scaMethods[]`, `chosenScaMethod`). */
export interface ScaMethod {
  authenticationType: "SMS_OTP" | "CHIP_OTP" | "PUSH_OTP";
  authenticationMethodId: string;
  name: string;
  explanation: string;
}

/** The challenge of a chosen method. */
export interface ChallengeData {
  data?: string[];
  otpMaxLength: number;
  otpFormat: "integer" | "characters";
  additionalInformation: string;
}

/** Length of every sandbox OTP. */
export const OTP_LENGTH = SANDBOX_OTP.length;

/** The methods offered after PSU authentication, in this order. */
export const SCA_METHODS: readonly ScaMethod[] = [
  {
    authenticationType: "SMS_OTP",
    authenticationMethodId: "sms-otp",
    name: "SMS to +995 5** *** 117",
    explanation: "A one-time password is sent by SMS to the PSU's phone",
  },
  {
    authenticationType: "CHIP_OTP",
    authenticationMethodId: "chip-otp",
    name: "Chip card reader",
    explanation: "The PSU's card reader derives a one-time password from the challenge",
  },
  {
    authenticationType: "PUSH_OTP",
    authenticationMethodId: "push-otp",
    name: "Sandbox Bank app",
    explanation: "A one-time password is pushed to the PSU's Sandbox Bank app",
  },
];

/** The challenge the chip card reader is given. */
const CHIP_CHALLENGE = "37465920";

/** The method with this id, or `undefined`. */
export function findScaMethod(id: string): ScaMethod | undefined {
  return SCA_METHODS.find((method) => method.authenticationMethodId === id);
}

/** The challenge data of a chosen method. */
export function challengeOf(method: ScaMethod): ChallengeData {
  const sandbox = `Sandbox: the one-time password is ${SANDBOX_OTP}`;
  const common = { otpMaxLength: OTP_LENGTH, otpFormat: "integer" as const };
  switch (method.authenticationType) {
    case "SMS_OTP":
      return {
        ...common,
        additionalInformation: `Enter the code sent by SMS to +995 5** *** 117. ${sandbox}`,
      };
    case "CHIP_OTP":
      return {
        ...common,
        data: [CHIP_CHALLENGE],
        additionalInformation:
          `Insert your card into the reader, type the challenge ${CHIP_CHALLENGE} and enter the code it shows. ${sandbox}`,
      };
    case "PUSH_OTP":
      return {
        ...common,
        additionalInformation: `Open the Sandbox Bank app and enter the code it shows. ${sandbox}`,
      };
  }
}
